#!/usr/bin/env bash
# Before `npm start`: installs the host packages when missing and starts the Docker engine when it is
# not running and we are root, and puts `svc` on the PATH (scripts/cli-wrapper.sh: /usr/local/bin/svc, or
# SVC_BIN_DIR). svc itself keeps serving its API if the engine is unreachable.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-host-packages.sh --daemon || echo "svc: could not install host packages; continuing" >&2
[ -d node_modules ] || npm ci --no-audit --no-fund
if ! docker info >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v dockerd >/dev/null 2>&1; then
  nohup dockerd >/var/log/svc-dockerd.log 2>&1 &
  for _ in $(seq 1 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
fi
bash scripts/cli-wrapper.sh install || true
