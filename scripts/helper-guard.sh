#!/bin/sh
# Runs one detached helper of svc (dnsmasq, the host Caddy) for as long as the directory it serves exists:
#   helper-guard.sh <dir> <command> [args...]
# svc starts it detached so the helper outlives the daemon (the data plane must not depend on it).
# - A helper that dies after running a while (killed, crashed) is started again within a second, with or
#   without the daemon; one that exits within 2 s of its start (a port taken, bad arguments) ends the guard,
#   and the daemon, which checks the helper every second, reports why.
# - When <dir> is deleted (the data directory is gone), the helper is stopped and the guard exits, so a
#   stale helper never holds its ports for an svc that no longer exists. SIGTERM to the guard stops both.
# One process: it polls the helper and the directory each second rather than blocking in `wait` with a
# second shell watching the directory (1.2 MB resident per guard saved).
# Values arrive as arguments, never as shell text.
dir=$1
shift
child=
stopping=
stop() {
  stopping=1
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap stop TERM INT
trap '' HUP
status=0
while [ -z "$stopping" ] && [ -d "$dir" ]; do
  began=$(date +%s)
  "$@" &
  child=$!
  # `sleep & wait` rather than `sleep`: a trapped signal interrupts the wait at once.
  while [ -z "$stopping" ] && [ -d "$dir" ] && kill -0 "$child" 2>/dev/null; do
    sleep 1 &
    wait $!
  done
  [ -d "$dir" ] || kill -TERM "$child" 2>/dev/null
  # Reap it (its exit status); a trapped signal interrupts wait: wait again until it is really gone.
  wait "$child"
  status=$?
  while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
  { [ -n "$stopping" ] || [ ! -d "$dir" ] || [ $(($(date +%s) - began)) -lt 2 ]; } && break
  echo "helper-guard: $1 exited ($status); starting it again" >&2
done
exit "$status"
