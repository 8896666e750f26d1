#!/usr/bin/env bash
# `make image`: build the operator image from the Dockerfile users build with Docker, here
# without a Docker engine: buildah (Debian's package) with vfs storage and chroot isolation.
#
# Where the Dockerfile's base (python:3.11-slim) cannot be pulled (no registry is reachable
# here), a base of the same shape is made once from Debian bookworm's python3.11 with
# mmdebstrap (`python` on PATH, ensurepip for venvs) and passed as PYTHON_IMAGE; give
# PYTHON_IMAGE yourself to use another. Then the image is checked as the cluster runs it: its
# user is 65532 (non-root), and `dra-operator` runs as that user on the image's root filesystem
# mounted read-only, with only /tmp writable (deploy/ mounts an emptyDir there). The size is
# printed and the image is saved as a docker-archive for a node's containerd
# (`ctr -n k8s.io images import FILE`).
#
# The archive is reused while its inputs are unchanged: the key is a hash of the base image's
# ID and of every file of the build context (.dockerignore's: pyproject.toml, constraints.txt,
# README.md, LICENSE, operator/), the Dockerfile and .dockerignore; REBUILD=1 builds anyway.
#
# Usage: e2e/image/build.sh   (as root: buildah's chroot isolation and the read-only check
# mount). Prints the archive's path on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
version=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
image=localhost/dra-operator:$version
cache=${DRA_OPERATOR_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dra-operator/image}
archive=$cache/dra-operator-$version.tar
stamp=$archive.key
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot

for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || {
    echo "$tool not found: make image installs it (apt-get install buildah mmdebstrap)" >&2
    exit 1
  }
done
mkdir -p "$cache"

# The base: python:3.11-slim when a registry answers, else one made here from Debian.
base=${PYTHON_IMAGE:-}
if [ -z "$base" ]; then
  if timeout 60 buildah pull -q docker.io/library/python:3.11-slim >/dev/null 2>&1; then
    base=docker.io/library/python:3.11-slim
  else
    base=localhost/python-base:3.11-bookworm
  fi
fi
if [ "$base" = localhost/python-base:3.11-bookworm ] &&
  ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  echo "making $base with mmdebstrap (python:3.11-slim cannot be pulled)" >&2
  rootfs=$cache/python-base.tar
  mmdebstrap --variant=minbase --quiet \
    --include=python3.11,python3.11-venv,python3-pip,ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook="ln -sf python3.11 \"\$1/usr/bin/python\"" \
    --customize-hook="rm -rf \"\$1\"/var/lib/apt/lists/* \"\$1\"/var/cache/apt/*" \
    bookworm "$rootfs" http://deb.debian.org/debian
  ctr=$(buildah from scratch)
  buildah add --quiet "$ctr" "$rootfs" /
  buildah config --env LANG=C.UTF-8 --env PATH=/usr/local/bin:/usr/bin:/bin \
    --cmd python3 "$ctr"
  buildah commit --quiet --rm "$ctr" "$base" >/dev/null
  rm -f "$rootfs"
fi

# What the image is made of: the base's ID, then each input file's hash, in a stable order.
key=$(
  {
    echo "base $(buildah inspect --type image --format '{{.FromImageID}}' "$base")"
    find Dockerfile .dockerignore pyproject.toml constraints.txt README.md LICENSE operator \
      -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*.egg-info/*' -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)
if [ -z "${REBUILD:-}" ] && [ -f "$archive" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
  echo "image up to date: $archive (inputs unchanged, key ${key:0:12})" >&2
  echo "$archive"
  exit 0
fi

echo "building $image from Dockerfile on $base" >&2
previous=$(buildah inspect --type image --format '{{.FromImageID}}' "$image" 2>/dev/null || true)
# RUN steps trust what this host trusts (here a TLS-intercepting proxy's CA in front of PyPI);
# the bundle is mounted for the build only, never copied into the image.
trust=()
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  trust=(--volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
fi
start=$(date +%s)
buildah build --quiet --layers=false -f Dockerfile "${trust[@]}" \
  --build-arg "PYTHON_IMAGE=$base" \
  --build-arg "VERSION=$version" \
  --build-arg "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  --build-arg "CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  -t "$image" . >/dev/null
echo "built in $(($(date +%s) - start)) s" >&2
# The image the tag named before: untagged now, and a full copy of every layer under vfs.
if [ -n "$previous" ] &&
  [ "$previous" != "$(buildah inspect --type image --format '{{.FromImageID}}' "$image")" ]; then
  buildah rmi "$previous" >/dev/null 2>&1 || true
fi

user=$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$image")
[ "$user" = 65532:65532 ] || {
  echo "image user is '$user', not 65532:65532" >&2
  exit 1
}

# Run as the image's user on its root filesystem, read-only, with a tmpfs /tmp.
ctr=$(buildah from --quiet "$image")
mnt=$(buildah mount "$ctr")
ro=$(mktemp -d)
cleanup() {
  umount "$ro/tmp" "$ro/proc" 2>/dev/null || true
  umount "$ro" 2>/dev/null || true
  rmdir "$ro" 2>/dev/null || true
  buildah umount "$ctr" >/dev/null 2>&1 || true
  buildah rm "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT
mount --bind "$mnt" "$ro"
mount -o remount,bind,ro "$ro"
mount -t proc proc "$ro/proc"
mount -t tmpfs -o mode=1777 tmpfs "$ro/tmp"
cp "$root"/examples/{deviceclass,resourceslices,workloads}.yaml "$ro/tmp/"
as_user() { chroot --userspec=65532:65532 "$ro" env HOME=/tmp "$@"; }
as_user /opt/dra-operator/bin/dra-operator --version >&2
rc=0
as_user /opt/dra-operator/bin/dra-operator allocate -f /tmp/deviceclass.yaml \
  -f /tmp/resourceslices.yaml -f /tmp/workloads.yaml >"$ro/tmp/allocate.out" || rc=$?
if [ "$rc" -ne 3 ] || ! grep -q 'allocated on node' "$ro/tmp/allocate.out"; then
  cat "$ro/tmp/allocate.out" >&2
  echo "allocate in the image exited $rc (3 expected: the example leaves one claim out)" >&2
  exit 1
fi
if as_user /opt/dra-operator/bin/python -c 'open("/opt/dra-operator/x", "w")' 2>/dev/null; then
  echo "the root filesystem was writable" >&2
  exit 1
fi
echo "runs as 65532 on a read-only root filesystem" >&2

rm -f "$archive" "$stamp"
buildah push --quiet "$image" "docker-archive:$archive:dra-operator:$version" >/dev/null
size=$(buildah images --format '{{.Size}}' "$image")
echo "$key" >"$stamp"
echo "image $image: $size (buildah images); archive $(du -h "$archive" | cut -f1)" >&2
echo "$archive"
