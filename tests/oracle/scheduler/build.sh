#!/usr/bin/env bash
# Build the scheduler oracle (dra-scheduler-oracle: kube-scheduler v1.37.2's framework and
# in-tree plugins) into a cache keyed by the hash of its sources, outside the repo; skip when that
# binary exists. Progress goes to stderr; the binary's path is the only line on stdout, so callers
# can run:  oracle=$(tests/oracle/scheduler/build.sh)
# DRA_ORACLE_JOBS sets go build -p (default 2: the machine is shared with other builds).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
sources=(go.mod go.sum build.sh)
for f in ./*.go; do
  case $f in *_test.go) ;; *) sources+=("${f#./}") ;; esac
done
hash=$(printf '%s\n' "${sources[@]}" | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
cache=${DRA_OPERATOR_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/oracle}/scheduler-$hash
binary=$cache/dra-scheduler-oracle
if [ -x "$binary" ]; then
  echo "dra-scheduler-oracle: cached in $cache" >&2
else
  command -v go >/dev/null || { echo "dra-scheduler-oracle: go is not installed" >&2; exit 3; }
  mkdir -p "$cache"
  tmp=$(mktemp "$cache/dra-scheduler-oracle.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  start=$(date +%s)
  # The flags and tags of the control plane's kube-scheduler build (e2e/controlplane/build.sh):
  # the same upstream code then, and its packages come from the Go build cache it filled.
  GOTOOLCHAIN=local CGO_ENABLED=0 go build -mod=readonly -p "${DRA_ORACLE_JOBS:-2}" -trimpath \
    -pgo=off -tags selinux,notest,grpcnotrace -o "$tmp" .
  chmod +x "$tmp"
  mv "$tmp" "$binary"
  echo "dra-scheduler-oracle: built in $(( $(date +%s) - start ))s -> $binary" >&2
fi
echo "$binary"
