#!/bin/sh
# Stand-in for the official redis:7-alpine entrypoint, built on Debian bookworm's redis 7.0.
# Contract kept: the command is passed through (`redis-server --requirepass pw --appendonly yes
# --dir /data`); a first argument starting with '-' or ending in .conf is given to redis-server;
# WORKDIR /data; files in the working dir are chowned to redis and the server runs as redis;
# protected mode is off unless a config file sets it (the official image's default).
set -e

if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
	set -- redis-server "$@"
fi

if [ "$1" = 'redis-server' ] && [ "$(id -u)" = '0' ]; then
	find . \! -user redis -exec chown redis '{}' +
	exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi

um="$(umask)"
if [ "$um" = '0022' ]; then
	umask 0077
fi

if [ "$1" = 'redis-server' ]; then
	doProtectedMode=1
	configFile=
	if [ -f "$2" ]; then
		configFile="$2"
		if grep -q '^protected-mode' "$configFile"; then
			doProtectedMode=
		fi
	fi
	if [ -n "$doProtectedMode" ]; then
		shift
		if [ -n "$configFile" ]; then shift; fi
		set -- --protected-mode no "$@"
		if [ -n "$configFile" ]; then set -- "$configFile" "$@"; fi
		set -- redis-server "$@"
	fi
fi

exec "$@"
