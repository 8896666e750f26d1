#!/usr/bin/env bash
# Build the node runtime pinned in go.mod here: containerd 2.x (CRI, CDI on), its runc shim and
# ctr, into a per-version cache next to the control plane's. Skips binaries already there.
# Static (CGO_ENABLED=0): the cgo-only snapshotters (btrfs, devmapper, zfs) are left out.
# Usage: e2e/node/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's/^\tgithub.com\/containerd\/containerd\/v2 \(v[0-9.]*\).*/\1/p' "$here/go.mod")
cache=${DRA_OPERATOR_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/k8s}/containerd-$version
mkdir -p "$cache"
cd "$here"
for bin in containerd containerd-shim-runc-v2 ctr; do
  if [ -x "$cache/$bin" ]; then
    echo "$bin $version: cached in $cache"
    continue
  fi
  start=$(date +%s)
  GOTOOLCHAIN=local CGO_ENABLED=0 go build -mod=readonly -p "$(nproc)" -trimpath -pgo=off \
    -tags no_btrfs,no_devmapper,no_zfs,no_aufs,grpcnotrace \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$version" \
    -o "$cache/$bin.tmp" "github.com/containerd/containerd/v2/cmd/$bin"
  mv "$cache/$bin.tmp" "$cache/$bin"
  echo "$bin $version: built in $(( $(date +%s) - start ))s -> $cache/$bin"
done
