#!/usr/bin/env bash
# Installs the host packages svc and its tests use, from Debian's archive, only when something is missing.
set -euo pipefail
need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v caddy >/dev/null 2>&1 || need+=(caddy)
command -v busybox >/dev/null 2>&1 || need+=(busybox-static)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "missing packages: ${need[*]}; run as root or install them" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
