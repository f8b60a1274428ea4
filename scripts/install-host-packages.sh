#!/usr/bin/env bash
# Installs host packages from Debian's archive, only those whose command is missing.
#   install-host-packages.sh            what the test suite needs (engine, Caddy, dnsmasq, image-building tools,
#                                       chromium for the browser tests of the web UI, age to check that Debian's
#                                       tool decrypts the off-host backup copies, docker-registry, nsenter and
#                                       iptables for the three-node Swarm of test/support/swarm-cluster.ts,
#                                       htpasswd for the bcrypt password file of the private-registry test)
#   install-host-packages.sh --daemon   what `svc serve` needs: the engine, git, dnsmasq (the DNS responder the
#                                       proxy resolves apps through) and Caddy (the proxy when SVC_PROXY_MODE
#                                       is auto and the proxy image cannot be pulled, or host)
# Debian's caddy package enables a caddy.service of its own on ports 80/443/2019; when this script
# installed it, that service is disabled again: svc runs Caddy itself.
set -euo pipefail
declare -A pkg=([dockerd]=docker.io [git]=git [caddy]=caddy [dnsmasq]=dnsmasq-base [busybox]=busybox-static [debootstrap]=debootstrap [chromium]=chromium [age]=age [docker-registry]=docker-registry [nsenter]=util-linux [iptables]=iptables [htpasswd]=apache2-utils)
cmds=(dockerd git caddy dnsmasq busybox debootstrap chromium age docker-registry nsenter iptables htpasswd)
[ "${1:-}" = "--daemon" ] && cmds=(dockerd git caddy dnsmasq)
export PATH="$PATH:/usr/sbin:/sbin"
need=()
for c in "${cmds[@]}"; do command -v "$c" >/dev/null 2>&1 || need+=("${pkg[$c]}"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "missing packages: ${need[*]}; run as root or install them" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
  if [[ " ${need[*]} " == *" caddy "* ]] && command -v systemctl >/dev/null 2>&1; then
    systemctl disable --now caddy.service >/dev/null 2>&1 || true
  fi
fi
