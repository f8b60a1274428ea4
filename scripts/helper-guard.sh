#!/bin/sh
# Runs one detached helper of svc (dnsmasq, the host Caddy) for as long as the directory it serves exists:
#   helper-guard.sh <dir> <command> [args...]
# svc starts it detached so the helper outlives the daemon (the data plane must not depend on it). When
# <dir> is deleted (the data directory is gone), the helper is stopped and the guard exits, so a stale
# helper never holds its ports for an svc that no longer exists. SIGTERM to the guard stops the helper.
# Values arrive as arguments, never as shell text.
dir=$1
shift
"$@" &
child=$!
watcher=
stop() {
  kill -TERM "$child" 2>/dev/null
  [ -n "$watcher" ] && kill -TERM "$watcher" 2>/dev/null
  wait "$child"
  exit 0
}
trap stop TERM INT
trap '' HUP
(
  while [ -d "$dir" ]; do sleep 2; done
  kill -TERM "$child" 2>/dev/null
) &
watcher=$!
wait "$child"
status=$?
kill -TERM "$watcher" 2>/dev/null
exit "$status"
