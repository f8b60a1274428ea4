#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: host packages, node modules, then vitest (unit and
# integration; the integration setup starts dockerd when none is running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-host-packages.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json --noEmit
npx vitest run "$@"
