#!/usr/bin/env bash
# Install the operator the safe way for the cluster KUBECONFIG points at (docs/install.md):
# the one list of steps both e2e/kind/run.sh (kind) and the deployed e2e suite on the local
# control plane (e2e/_install.py) run, so what is tried here is what kind users get.
#
#   e2e/kind/install.sh [--kubectl PATH] [--image IMAGE] [--timeout 300s]
#
# 1. the CRDs, and wait until they are Established;
# 2. the layout of deploy/ that fits the server's release, read from the server: 1.36+ deploy/
#    (both routing components); 1.34, 1.35 with MutatingAdmissionPolicy v1beta1 served
#    deploy/release-1.34; 1.30-1.35 otherwise deploy/require-scheduler-only (pods that need
#    devices must name dra-operator); before 1.30 no admission policy exists:
#    deploy/bare-control-plane, and a warning that every pod that needs a device must name
#    dra-operator (kube-scheduler runs beside it);
# 3. with --image, the Deployment pointed at IMAGE;
# 4. wait for the rollout.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
kubectl=kubectl
image=""
timeout=300s

while [ $# -gt 0 ]; do
  case $1 in
    --kubectl) kubectl=${2:?--kubectl needs a path}; shift 2 ;;
    --image) image=${2:?--image needs an image reference}; shift 2 ;;
    --timeout) timeout=${2:?--timeout needs a duration}; shift 2 ;;
    -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

step() { echo "==> $*" >&2; }

minor=$("$kubectl" version -o json | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | tail -n 1)
if [ -z "$minor" ]; then
  echo "cannot read the server's release from kubectl version" >&2
  exit 1
fi
beta_policies=$("$kubectl" get --raw /apis/admissionregistration.k8s.io/v1beta1 2>/dev/null || true)
if [ "$minor" -ge 36 ]; then
  layout=deploy
elif [ "$minor" -ge 34 ] && [[ $beta_policies == *'"mutatingadmissionpolicies"'* ]]; then
  layout=deploy/release-1.34
elif [ "$minor" -ge 30 ]; then
  layout=deploy/require-scheduler-only
else
  layout=deploy/bare-control-plane
  echo "warning: Kubernetes 1.$minor has no admission policy: nothing routes pods to" \
    "dra-operator. Every pod that needs a device must set spec.schedulerName: dra-operator," \
    "or kube-scheduler allocates devices too (docs/coexistence.md)." >&2
fi

step "installing the CRDs and $layout (Kubernetes 1.$minor)"
"$kubectl" apply --server-side -k "$repo/crds"
"$kubectl" wait --for=condition=Established --timeout=60s \
  crd/allocationpolicies.dra-operator.dev
"$kubectl" apply --server-side -k "$repo/$layout"
if [ -n "$image" ]; then
  "$kubectl" -n dra-operator-system set image deployment/dra-operator "operator=$image"
fi
"$kubectl" -n dra-operator-system rollout status deployment/dra-operator --timeout="$timeout"
