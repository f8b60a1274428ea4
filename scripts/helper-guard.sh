#!/bin/sh
# Runs one detached helper of svc (dnsmasq, the host Caddy) for as long as the directory it serves exists:
#   helper-guard.sh <dir> <command> [args...]
# svc starts it detached so the helper outlives the daemon (the data plane must not depend on it).
# - A helper that dies after running a while (killed, crashed) is started again at once, with or
#   without the daemon; one that exits within 2 s of its start (a port taken, bad arguments) ends the guard,
#   and the daemon, which checks the helper every second, reports why.
# - When <dir> is deleted (the data directory is gone), the helper is stopped within CHECK_SECONDS and the
#   guard exits, so a stale helper never holds its ports for an svc that no longer exists. SIGTERM to the
#   guard stops both.
# One process, no second shell watching the directory (1.2 MB resident per guard saved). It waits on a
# `sleep` of CHECK_SECONDS for the directory check, and the helper's exit interrupts that wait at once (a
# trapped SIGCHLD ends dash's `wait`; bash, not /bin/sh on Debian, waits the check out), so a killed helper
# is back within milliseconds, and the guard forks one `sleep` per CHECK_SECONDS instead of one a second
# (each fork + exec ~1 ms of CPU).
# Values arrive as arguments, never as shell text.
CHECK_SECONDS=5
dir=$1
shift
child=
timer=
stopping=
stop() {
  stopping=1
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap stop TERM INT
trap '' HUP
# Any child's exit (the helper's, the timer's) only has to end the current `wait`.
trap ':' CHLD
status=0
while [ -z "$stopping" ] && [ -d "$dir" ]; do
  began=$(date +%s)
  "$@" &
  child=$!
  # `sleep & wait` rather than `sleep`: a trapped signal (TERM, the helper's CHLD) interrupts the wait at
  # once. A timer still running (the wait ended by the helper's exit) is reused, not doubled.
  while [ -z "$stopping" ] && [ -d "$dir" ] && kill -0 "$child" 2>/dev/null; do
    if [ -z "$timer" ] || ! kill -0 "$timer" 2>/dev/null; then
      sleep "$CHECK_SECONDS" &
      timer=$!
    fi
    wait "$timer"
  done
  [ -d "$dir" ] || kill -TERM "$child" 2>/dev/null
  # Reap it (its exit status); a trapped signal interrupts wait: wait again until it is really gone.
  wait "$child"
  status=$?
  while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
  { [ -n "$stopping" ] || [ ! -d "$dir" ] || [ $(($(date +%s) - began)) -lt 2 ]; } && break
  echo "helper-guard: $1 exited ($status); starting it again" >&2
done
[ -n "$timer" ] && kill "$timer" 2>/dev/null
exit "$status"
