#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: host packages, node modules, then vitest (unit,
# integration and journeys; real Docker and Caddy). The suite runs on Caddy 2.11 (Debian unstable's package,
# fetched into a cache by test/support/caddy-unstable.ts); a second, shorter pass runs the proxy and deploy
# files against the host's own Caddy (Debian bookworm's 2.6.2, what host mode installs):
# SVC_TEST_CADDY=/usr/bin/caddy.
#
# With no arguments the files run in two streams side by side, each one file at a time: the Swarm files
# (each a cluster of engines in network namespaces, mostly waiting on them), the managed-service, CLI and
# notification files, the journeys and the 2.6.2 pass in one; the unit files and the other integration files
# in the other (each stream about half of the time). Run one after the other they took 27.7 + 2.2 min on 2
# cores, over CI's 30-minute goal. Tests never touch what another test made, so the
# streams need nothing from each other but the engine and the Caddy cache, which are made first.
# With arguments, one vitest run of exactly those. Ends with a plain "N passed, N failed" line read from
# vitest's JSON reports.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-host-packages.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json --noEmit
main_report=$(mktemp)
side_report=$(mktemp)
journeys_report=$(mktemp)
host_report=$(mktemp)
reports=("$main_report" "$side_report" "$journeys_report" "$host_report")
vt() { local out=$1; shift; npx vitest run --reporter=default --reporter=json --outputFile.json="$out" "$@"; }
engine_pid=""
side_log=$(mktemp)
cleanup() {
  rm -f "${reports[@]}" "$side_log"
  if [ -n "$engine_pid" ]; then kill "$engine_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
status=0

if [ $# -gt 0 ]; then
  vt "$main_report" "$@" || status=$?
else
  engine_pid=$(npx tsx test/support/prepare-engine.ts | tail -n 1)
  (
    s=0
    vt "$side_report" --project integration test/integration/swarm test/integration/service test/integration/cli.test.ts test/integration/notify.test.ts || s=$?
    vt "$journeys_report" --project journeys || s=$?
    if [ -x /usr/bin/caddy ]; then
      echo "second pass: the proxy and deploy files on the host's Caddy ($(/usr/bin/caddy version))"
      SVC_TEST_CADDY=/usr/bin/caddy vt "$host_report" --project integration \
        test/integration/proxy.test.ts test/integration/proxy-shared.test.ts test/integration/proxy-steady.test.ts \
        test/integration/dataplane-host.test.ts test/integration/dataplane-repair.test.ts \
        test/integration/deploys.test.ts test/integration/replicas-proxy.test.ts || s=$?
    fi
    exit "$s"
  ) >"$side_log" 2>&1 &
  side=$!
  vt "$main_report" --project unit --project integration --exclude 'test/integration/swarm*.test.ts' --exclude 'test/integration/service*.test.ts' \
    --exclude test/integration/cli.test.ts --exclude test/integration/notify.test.ts || status=$?
  wait "$side" || status=$?
  echo "the other stream: the Swarm, service, CLI and notification files, the journeys and the pass on the host's Caddy"
  cat "$side_log"
fi

node -e '
  const fs = require("fs");
  const rs = process.argv.slice(1).filter((f) => fs.existsSync(f) && fs.statSync(f).size > 0).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const sum = (k) => rs.reduce((a, r) => a + r[k], 0);
  console.log(`${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed, ${sum("numPendingTests") + sum("numTodoTests")} skipped`);
' "${reports[@]}" || true
exit "$status"
