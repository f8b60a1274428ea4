#!/usr/bin/env bash
# The `svc` command on the PATH (docs/api.md "CLI"): a two-line wrapper that runs this checkout's CLI,
#   exec node '<checkout>/dist/cli.js' "$@"
#   cli-wrapper.sh install   # from prepare-host.sh (npm start): writes $SVC_BIN_DIR/svc when missing or
#                            # when it is our wrapper for another checkout (the last checkout started wins)
#   cli-wrapper.sh remove    # from svc uninstall: deletes it when it is our wrapper for this checkout
# SVC_BIN_DIR: the directory (default /usr/local/bin; empty: do nothing), so tests write a temp dir. A file
# there without the marker line below is not ours: it is never overwritten nor deleted (exit 1, said why).
# Exit 0 when done or nothing to do.
set -euo pipefail
MARKER='# svc-cli-wrapper: written by svc (npm start); svc uninstall removes it'
checkout=$(cd "$(dirname "$0")/.." && pwd -P)
dir=${SVC_BIN_DIR-/usr/local/bin}
[ -n "$dir" ] || exit 0
target="$dir/svc"
# The checkout's path in single quotes, each ' written as '\'' (the path is data, never shell text).
quoted="'${checkout//\'/\'\\\'\'}'"
wanted="#!/bin/sh
$MARKER
exec node $quoted/dist/cli.js \"\$@\""

ours() { [ -f "$target" ] && grep -qxF -- "$MARKER" "$target"; }

case "${1:-}" in
  install)
    if [ -e "$target" ] || [ -L "$target" ]; then
      if ! ours; then
        echo "svc: $target exists and is not svc's wrapper; left as it is (run this checkout's CLI with node $checkout/dist/cli.js)" >&2
        exit 1
      fi
      [ "$(cat "$target")" = "$wanted" ] && exit 0
    fi
    if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
      echo "svc: cannot write $target ($dir is not a writable directory); run the CLI with node $checkout/dist/cli.js" >&2
      exit 1
    fi
    tmp=$(mktemp "$dir/.svc.XXXXXX")
    printf '%s\n' "$wanted" >"$tmp"
    chmod 755 "$tmp"
    mv -f "$tmp" "$target"
    echo "svc: wrote $target (runs $checkout/dist/cli.js)"
    ;;
  remove)
    if ours && [ "$(cat "$target")" = "$wanted" ]; then
      rm -f "$target"
      echo "removed $target"
    fi
    ;;
  *)
    echo "usage: $0 install | remove" >&2
    exit 2
    ;;
esac
