#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: host packages, node modules, then vitest (unit and
# integration; the integration setup starts dockerd when none is running). The suite runs on Caddy 2.11
# (Debian unstable's package, fetched into a cache by test/support/caddy-unstable.ts); then, with no
# arguments, a second, shorter pass runs the proxy and deploy files against the host's own Caddy
# (Debian bookworm's 2.6.2, what host mode installs): SVC_TEST_CADDY=/usr/bin/caddy. Ends with a plain
# "N passed, N failed" line read from vitest's JSON reports of both passes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-host-packages.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json --noEmit
report=$(mktemp)
report_host=$(mktemp)
trap 'rm -f "$report" "$report_host"' EXIT
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
if [ $# -eq 0 ] && [ -x /usr/bin/caddy ]; then
  echo "second pass: the proxy and deploy files on the host's Caddy ($(/usr/bin/caddy version))"
  SVC_TEST_CADDY=/usr/bin/caddy npx vitest run --project integration --reporter=default --reporter=json --outputFile.json="$report_host" \
    test/integration/proxy.test.ts test/integration/proxy-shared.test.ts test/integration/proxy-steady.test.ts \
    test/integration/dataplane-host.test.ts test/integration/dataplane-repair.test.ts \
    test/integration/deploys.test.ts test/integration/replicas-proxy.test.ts || status=$?
fi
node -e '
  const fs = require("fs");
  const rs = process.argv.slice(1).filter((f) => fs.statSync(f).size > 0).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const sum = (k) => rs.reduce((a, r) => a + r[k], 0);
  console.log(`${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed, ${sum("numPendingTests") + sum("numTodoTests")} skipped`);
' "$report" "$report_host" || true
exit "$status"
