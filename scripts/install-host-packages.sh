#!/usr/bin/env bash
# Installs host packages from Debian's archive, only those whose command is missing.
#   install-host-packages.sh            what the test suite needs (engine, Caddy, image-building tools,
#                                       chromium for the browser tests of the web UI)
#   install-host-packages.sh --daemon   what `svc serve` needs (the engine and git; Caddy runs as a container,
#                                       so no host Caddy service competes for ports 80/443/2019)
set -euo pipefail
declare -A pkg=([dockerd]=docker.io [git]=git [caddy]=caddy [busybox]=busybox-static [debootstrap]=debootstrap [chromium]=chromium)
cmds=(dockerd git caddy busybox debootstrap chromium)
[ "${1:-}" = "--daemon" ] && cmds=(dockerd git)
need=()
for c in "${cmds[@]}"; do command -v "$c" >/dev/null 2>&1 || need+=("${pkg[$c]}"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "missing packages: ${need[*]}; run as root or install them" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
