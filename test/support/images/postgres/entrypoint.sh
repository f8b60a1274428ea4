#!/bin/bash
# Stand-in for the official postgres:16 entrypoint, built on Debian bookworm's PostgreSQL 15.
# Contract kept: POSTGRES_USER (default postgres), POSTGRES_PASSWORD (required unless
# POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_DB (default POSTGRES_USER), POSTGRES_INITDB_ARGS,
# POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), PGDATA (default /var/lib/postgresql/data),
# /docker-entrypoint-initdb.d/*.sh|*.sql; arguments starting with '-' are passed to postgres.
# Initializes PGDATA only when it has no PG_VERSION; runs the server as user postgres.
set -Eeo pipefail

log() { echo "svc-test postgres entrypoint: $*" >&2; }

if [ "${1:0:1}" = '-' ]; then
	set -- postgres "$@"
fi

if [ "$1" != 'postgres' ]; then
	exec "$@"
fi

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA

if [ "$(id -u)" = '0' ]; then
	# As the official image: own the (possibly freshly mounted) data dir and the socket dir,
	# then drop to postgres and come back through this script.
	mkdir -p "$PGDATA" /var/run/postgresql
	chmod 00700 "$PGDATA"
	find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
	chown postgres:postgres /var/run/postgresql
	chmod 03775 /var/run/postgresql
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	: "${POSTGRES_USER:=postgres}"
	: "${POSTGRES_DB:=$POSTGRES_USER}"
	: "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != 'trust' ]; then
		log 'Error: database is uninitialized and superuser password is not specified.'
		log '  Set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust).'
		exit 1
	fi
	log "initializing $PGDATA for user $POSTGRES_USER, database $POSTGRES_DB"
	pwfile="$(mktemp)"
	printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
	# shellcheck disable=SC2086
	initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
		--auth-host="$POSTGRES_HOST_AUTH_METHOD" --encoding=UTF8 --locale=C.UTF-8 \
		$POSTGRES_INITDB_ARGS >/dev/null
	rm -f "$pwfile"
	echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
	if [ "$POSTGRES_HOST_AUTH_METHOD" = 'scram-sha-256' ]; then
		echo "password_encryption = 'scram-sha-256'" >> "$PGDATA/postgresql.conf"
	fi
	echo "host all all all $POSTGRES_HOST_AUTH_METHOD" >> "$PGDATA/pg_hba.conf"

	# Temporary server on a private socket directory and no TCP, so that a readiness probe
	# (pg_isready on the default socket or TCP) only succeeds once the final server is up.
	initsock="$(mktemp -d)"
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$initsock" -w start >/dev/null
	export PGHOST="$initsock" PGUSER="$POSTGRES_USER" PGPASSWORD="${POSTGRES_PASSWORD:-}"
	if [ "$POSTGRES_DB" != 'postgres' ]; then
		echo 'CREATE DATABASE :"db" ;' | psql -v ON_ERROR_STOP=1 --no-psqlrc --dbname postgres \
			--set db="$POSTGRES_DB" >/dev/null
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
			*.sh) log "running $f"; . "$f" ;;
			*.sql) log "running $f"; psql -v ON_ERROR_STOP=1 --no-psqlrc --dbname "$POSTGRES_DB" -f "$f" ;;
			*.sql.gz) log "running $f"; gunzip -c "$f" | psql -v ON_ERROR_STOP=1 --no-psqlrc --dbname "$POSTGRES_DB" ;;
			*) ;;
		esac
	done
	pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	unset PGHOST PGUSER PGPASSWORD
	rmdir "$initsock"
	log 'init complete; ready for start up'
else
	log "PostgreSQL database directory appears to contain a database; skipping initialization"
fi

exec "$@"
