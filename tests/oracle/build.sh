#!/usr/bin/env bash
# Build the Go oracle (dra-oracle) against one release's DRA library into a cache keyed by the
# hash of its sources, outside the repo; skip when that binary exists. The sources are the same
# for every release; go.mod pins 1.36 (k8s.io/dynamic-resource-allocation v0.36.x), go.1.37.mod
# pins 1.37 (built with -modfile). Progress goes to stderr; the binary's path is the only line
# on stdout, so callers can run:  oracle=$(tests/oracle/build.sh 1.37)
# Usage: tests/oracle/build.sh [1.36|1.37]   (default 1.36)
# DRA_ORACLE_JOBS sets go build -p (default 2: the machine is shared with other builds).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
release=${1:-1.36}
case $release in
  1.36) modfile=go.mod ;;
  1.37) modfile=go.1.37.mod ;;
  *) echo "dra-oracle: no module for release $release (1.36, 1.37)" >&2; exit 2 ;;
esac
sources=()
for f in "$modfile" "${modfile%.mod}.sum" ./*.go; do
  case $f in *_test.go) ;; *) sources+=("${f#./}") ;; esac
done
hash=$(printf '%s\n' "${sources[@]}" | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
cache=${DRA_OPERATOR_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/oracle}/$hash
binary=$cache/dra-oracle
if [ -x "$binary" ]; then
  echo "dra-oracle $release: cached in $cache" >&2
else
  command -v go >/dev/null || { echo "dra-oracle: go is not installed" >&2; exit 3; }
  mkdir -p "$cache"
  tmp=$(mktemp "$cache/dra-oracle.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  start=$(date +%s)
  GOTOOLCHAIN=local CGO_ENABLED=0 go build -mod=readonly -modfile="$modfile" \
    -p "${DRA_ORACLE_JOBS:-2}" -trimpath -o "$tmp" .
  chmod +x "$tmp"
  mv "$tmp" "$binary"
  echo "dra-oracle $release: built in $(( $(date +%s) - start ))s -> $binary" >&2
fi
echo "$binary"
