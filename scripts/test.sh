#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: host packages, node modules, then vitest (unit and
# integration; the integration setup starts dockerd when none is running). Ends with a plain
# "N passed, N failed" line read from vitest's JSON report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-host-packages.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json --noEmit
report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$report" || true
exit "$status"
