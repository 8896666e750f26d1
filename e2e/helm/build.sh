#!/usr/bin/env bash
# Build the pinned `helm` CLI from its Go module into a per-version cache outside the repo.
# helm is only needed to render and lint deploy/helm/dra-operator; no chart repository is used.
# Usage: e2e/helm/build.sh        (prints the path of the binary on stdout; progress on stderr)
# DRA_OPERATOR_HELM_JOBS sets go install -p (default: every core; builds run one after another).
set -euo pipefail
# v4.3.1 is the newest release the module proxy serves whose go directive (1.26.0) Go 1.26.8
# accepts; bump it here and nowhere else.
version=v4.3.1
cache=${DRA_OPERATOR_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/helm}/$version
bin=$cache/helm
if [ -x "$bin" ]; then
  echo "helm $version: cached in $cache" >&2
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
start=$(date +%s)
# `go install pkg@version` resolves the module's own go.mod and verifies it against the checksum
# database, so the build is pinned without a wrapper module.
GOBIN="$cache/.tmp" GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
  go install -p "${DRA_OPERATOR_HELM_JOBS:-$(nproc)}" -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$version -X helm.sh/helm/v4/internal/version.metadata=" \
  "helm.sh/helm/v4/cmd/helm@$version"
mv "$cache/.tmp/helm" "$bin"
rmdir "$cache/.tmp"
echo "helm $version: built in $(( $(date +%s) - start ))s -> $bin" >&2
echo "$bin"
