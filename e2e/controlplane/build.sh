#!/usr/bin/env bash
# Build the pinned upstream control-plane binaries of one release into a per-version cache
# outside the repo. Each minor is its own Go module (v1.<minor>/, written by pin.py).
# Skips binaries already there; prints how long each build took.
# Usage: e2e/controlplane/build.sh [1.31|...|1.37|v1.37.2] [binary ...]
#        (default: the primary release 1.37 and every binary its module pins; the older
#        releases pin only kube-apiserver, and 1.34 and 1.35 also kube-scheduler and
#        kube-controller-manager, which are built only when named: the routing races of those
#        releases and `controlplane up --with-upstream --version 1.35` need them, `make
#        controlplane` does not)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
release=1.37
if [[ ${1:-} =~ ^v?1\.([0-9]+) ]]; then
  release=1.${BASH_REMATCH[1]}
  shift
fi
module=$here/v$release
[ -f "$module/go.mod" ] || { echo "no pinned module for $release: python3 $here/pin.py $release.<patch>" >&2; exit 2; }
version=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\).*/\1/p' "$module/go.mod")
minor=$(echo "$version" | cut -d. -f2)
cache=${DRA_OPERATOR_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/k8s}/$version
mkdir -p "$cache"
declare -A pkg=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
)
wanted=("$@")
on_demand=""
[ "$minor" -ge 36 ] || on_demand="kube-scheduler kube-controller-manager"
if [ ${#wanted[@]} -eq 0 ]; then  # default: every binary the module pins (its `tool` block)
  for bin in etcd kube-apiserver kubectl kube-scheduler kube-controller-manager kubelet; do
    [[ " $on_demand " == *" $bin "* ]] && continue
    grep -Eq "^[[:space:]]*(tool[[:space:]]+)?${pkg[$bin]}\$" "$module/go.mod" && wanted+=("$bin")
  done
fi
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
cd "$module"
for bin in "${wanted[@]}"; do
  [ -n "${pkg[$bin]:-}" ] || { echo "unknown binary: $bin" >&2; exit 2; }
  if [ -x "$cache/$bin" ]; then
    echo "$bin $version: cached in $cache"
    continue
  fi
  start=$(date +%s)
  GOTOOLCHAIN=local CGO_ENABLED=0 go build -mod=readonly -p "$(nproc)" -trimpath -pgo=off \
    -tags selinux,notest,grpcnotrace -ldflags "$ldflags" -o "$cache/$bin.tmp" "${pkg[$bin]}"
  mv "$cache/$bin.tmp" "$cache/$bin"
  echo "$bin $version: built in $(( $(date +%s) - start ))s -> $cache/$bin"
done
