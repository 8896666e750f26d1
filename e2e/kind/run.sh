#!/usr/bin/env bash
# Run the e2e suite against the operator installed in a kind cluster (docs/kind.md).
#
#   e2e/kind/run.sh [--k8s 1.36] [--name NAME] [--archive FILE] [--image IMAGE] [--no-build]
#                   [--keep] [-- PYTEST_ARGS...]
#
# Creates the cluster from e2e/kind/kind-<k8s>.yaml (or reuses one of that name), builds the
# image archive (`make image`, unless --no-build or --archive), loads it into the nodes with
# `kind load image-archive`, installs the operator with e2e/kind/install.sh (the same steps
# the deployed suite runs on the local control plane), runs `pytest e2e/` with KUBECONFIG
# pointing at the cluster, and deletes the cluster unless --keep. --image: the reference the
# archive holds, if not dra-operator:<version>. Needs docker, kind and kubectl on PATH
# (kubectl may also be the one `make controlplane` built), and the project's .venv.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
k8s=1.36
name=""
image=""
archive=""
build=true
keep=false
pytest_args=()

usage() {
  sed -n '2,14s/^# \{0,1\}//p' "$0"
  exit "${1:-0}"
}

while [ $# -gt 0 ]; do
  case $1 in
    --k8s) k8s=${2:?--k8s needs a version such as 1.36}; shift 2 ;;
    --name) name=${2:?--name needs a cluster name}; shift 2 ;;
    --image) image=${2:?--image needs an image reference}; shift 2 ;;
    --archive) archive=${2:?--archive needs a file}; build=false; shift 2 ;;
    --no-build) build=false; shift ;;
    --keep) keep=true; shift ;;
    -h|--help) usage 0 ;;
    --) shift; pytest_args=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; usage 2 ;;
  esac
done

config=$repo/e2e/kind/kind-$k8s.yaml
if [ ! -f "$config" ]; then
  echo "no kind config for Kubernetes $k8s: expected $config" >&2
  exit 2
fi
name=${name:-dra-operator-${k8s//./-}}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml")
image=${image:-dra-operator:$version}
cache=${DRA_OPERATOR_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/image}
archive=${archive:-$cache/dra-operator-$version.tar}

kubectl=$(command -v kubectl || true)
if [ -z "$kubectl" ]; then
  for candidate in "${XDG_CACHE_HOME:-$HOME/.cache}"/dra-operator/k8s/v*/kubectl; do
    [ -x "$candidate" ] && kubectl=$candidate
  done
fi
for tool in docker kind; do
  command -v "$tool" >/dev/null || { echo "$tool is not on PATH" >&2; exit 2; }
done
[ -n "$kubectl" ] || { echo "kubectl is not on PATH (or run make controlplane)" >&2; exit 2; }
pytest=${DRA_OPERATOR_E2E_PYTEST:-$repo/.venv/bin/pytest}
[ -x "$pytest" ] || { echo "$pytest missing: run make unit first" >&2; exit 2; }

workdir=$(mktemp -d)
export KUBECONFIG=$workdir/kubeconfig

cleanup() {
  local rc=$?
  if $keep; then
    local kept=${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/kind/$name.kubeconfig
    mkdir -p "$(dirname "$kept")"
    cp "$KUBECONFIG" "$kept" 2>/dev/null || true
    echo "kept cluster $name: export KUBECONFIG=$kept" >&2
  else
    kind delete cluster --name "$name" >&2 || true
  fi
  rm -rf "$workdir"
  exit "$rc"
}
trap cleanup EXIT

step() { echo "==> $*" >&2; }

if kind get clusters 2>/dev/null | grep -qx "$name"; then
  step "reusing kind cluster $name"
else
  step "creating kind cluster $name (Kubernetes $k8s)"
  kind create cluster --name "$name" --config "$config" --wait 180s
fi
kind get kubeconfig --name "$name" >"$KUBECONFIG"

if $build; then
  step "building the image archive (make image)"
  make -C "$repo" image >&2
fi
[ -f "$archive" ] || { echo "no image archive at $archive: run make image" >&2; exit 2; }
step "loading $archive into $name"
kind load image-archive "$archive" --name "$name"

# kind runs kube-scheduler: install.sh installs the routing that fits the release, so that
# dra-operator alone allocates devices (docs/coexistence.md).
install_args=(--kubectl "$kubectl")
[ "$image" = "dra-operator:$version" ] || install_args+=(--image "$image")
"$repo/e2e/kind/install.sh" "${install_args[@]}"

step "running the e2e suite"
# The operator already runs in the cluster: the suite must not start its own.
DRA_OPERATOR_E2E_OPERATOR=deployed "$pytest" -p no:cacheprovider "$repo/e2e" "${pytest_args[@]}"
