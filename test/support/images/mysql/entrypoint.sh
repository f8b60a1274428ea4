#!/bin/bash
# Stand-in for the official mysql:8 entrypoint, built on Debian bookworm's MariaDB 10.11.
# Contract kept: MYSQL_ROOT_PASSWORD (or MYSQL_ALLOW_EMPTY_PASSWORD / MYSQL_RANDOM_ROOT_PASSWORD),
# MYSQL_ROOT_HOST (default %), MYSQL_DATABASE, MYSQL_USER + MYSQL_PASSWORD,
# /docker-entrypoint-initdb.d/*.sh|*.sql|*.sql.gz; data in /var/lib/mysql initialized only when it
# has no mysql/ schema dir; listens on 0.0.0.0:3306; arguments starting with '-' go to mysqld.
set -Eeo pipefail

log() { echo "svc-test mysql entrypoint: $*" >&2; }

if [ "${1:0:1}" = '-' ]; then
	set -- mysqld "$@"
fi

if [ "$1" != 'mysqld' ] && [ "$1" != 'mariadbd' ]; then
	exec "$@"
fi

DATADIR=/var/lib/mysql

if [ "$(id -u)" = '0' ]; then
	mkdir -p "$DATADIR" /run/mysqld
	find "$DATADIR" \! -user mysql -exec chown mysql:mysql '{}' +
	chown mysql:mysql /run/mysqld
	chmod 0755 /run/mysqld
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$BASH_SOURCE" "$@"
fi

sql_escape() { printf '%s' "$1" | sed -e "s/\\\\/\\\\\\\\/g" -e "s/'/\\\\'/g"; }

if [ ! -d "$DATADIR/mysql" ]; then
	if [ -z "${MYSQL_ROOT_PASSWORD:-}" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
		log 'Error: database is uninitialized and password option is not specified.'
		log '  Set one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD and MYSQL_RANDOM_ROOT_PASSWORD.'
		exit 1
	fi
	if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
		MYSQL_ROOT_PASSWORD="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
		log "GENERATED ROOT PASSWORD: $MYSQL_ROOT_PASSWORD"
	fi
	: "${MYSQL_ROOT_HOST:=%}"
	log "initializing $DATADIR"
	mariadb-install-db --user=mysql --datadir="$DATADIR" --auth-root-authentication-method=normal \
		--skip-test-db --skip-name-resolve --rpm >/dev/null

	# Temporary server without networking on a private socket, so that `mysqladmin ping` on the
	# default socket or on TCP only answers once the final server runs.
	initsock="$(mktemp -u /tmp/mysqld-init.XXXXXX.sock)"
	mysqld --datadir="$DATADIR" --skip-networking --socket="$initsock" --pid-file=/tmp/mysqld-init.pid &
	pid=$!
	for _ in $(seq 1 300); do
		if mysqladmin --socket="$initsock" -uroot ping >/dev/null 2>&1; then break; fi
		if ! kill -0 "$pid" 2>/dev/null; then log 'temporary server died during init'; exit 1; fi
		sleep 0.2
	done
	rootpw="$(sql_escape "${MYSQL_ROOT_PASSWORD:-}")"
	roothost="$(sql_escape "$MYSQL_ROOT_HOST")"
	{
		echo "SET @@SESSION.SQL_LOG_BIN=0;"
		echo "DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1';"
		echo "EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS root@\\'', @@hostname, '\\'');"
		echo "DELETE FROM mysql.global_priv WHERE User = '';"
		echo "SET PASSWORD FOR 'root'@'localhost' = PASSWORD('$rootpw');"
		if [ "$MYSQL_ROOT_HOST" != 'localhost' ]; then
			echo "CREATE USER 'root'@'$roothost' IDENTIFIED BY '$rootpw';"
			echo "GRANT ALL ON *.* TO 'root'@'$roothost' WITH GRANT OPTION;"
		fi
		if [ -n "${MYSQL_DATABASE:-}" ]; then
			echo "CREATE DATABASE IF NOT EXISTS \`$MYSQL_DATABASE\`;"
		fi
		if [ -n "${MYSQL_USER:-}" ] && [ -n "${MYSQL_PASSWORD:-}" ]; then
			echo "CREATE USER '$(sql_escape "$MYSQL_USER")'@'%' IDENTIFIED BY '$(sql_escape "$MYSQL_PASSWORD")';"
			if [ -n "${MYSQL_DATABASE:-}" ]; then
				echo "GRANT ALL ON \`$MYSQL_DATABASE\`.* TO '$(sql_escape "$MYSQL_USER")'@'%';"
			fi
		fi
		echo "FLUSH PRIVILEGES;"
	} | mysql --protocol=socket --socket="$initsock" -uroot --binary-mode
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
			*.sh) log "running $f"; . "$f" ;;
			*.sql) log "running $f"; mysql --socket="$initsock" -uroot -p"${MYSQL_ROOT_PASSWORD:-}" ${MYSQL_DATABASE:+"$MYSQL_DATABASE"} < "$f" ;;
			*.sql.gz) log "running $f"; gunzip -c "$f" | mysql --socket="$initsock" -uroot -p"${MYSQL_ROOT_PASSWORD:-}" ${MYSQL_DATABASE:+"$MYSQL_DATABASE"} ;;
			*) ;;
		esac
	done
	kill -TERM "$pid"
	wait "$pid" || true
	log 'init complete; ready for start up'
else
	log 'database directory already initialized; skipping initialization'
fi

exec "$@"
