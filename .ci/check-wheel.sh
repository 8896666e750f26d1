#!/usr/bin/env bash
# The package users install: build the sdist and wheel, `twine check --strict` them, install
# the wheel into a clean venv (no source tree on its path) and run its console scripts:
# `dra-operator` (version, an offline allocation, which needs the packaged CEL grammar),
# `kubectl-dra` and `kubectl_complete-dra`. Network: PyPI only (the isolated build's
# setuptools, the wheel's dependencies), through pip's cache; dependencies pinned by
# constraints.txt. Prints the artifacts' sizes and the install's seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3.11}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

.venv/bin/python -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; exit 1; }
.venv/bin/twine check --strict "$work"/dist/*
stat -c '%s bytes %n' "$work"/dist/*

start=$SECONDS
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q -c constraints.txt "$work"/dist/*.whl
echo "clean install: $((SECONDS - start)) s"

cd "$work"
venv/bin/dra-operator --version
venv/bin/kubectl-dra --help >/dev/null
# Into a file first: `grep -q` stops reading at its match, which fails the writer (EPIPE).
venv/bin/kubectl_complete-dra "" >complete.out
grep -qx 'explain.*' complete.out
rc=0
venv/bin/dra-operator allocate -f "$root/examples/deviceclass.yaml" \
  -f "$root/examples/resourceslices.yaml" -f "$root/examples/workloads.yaml" >allocate.out || rc=$?
# 3: some claim of the example does not fit (as intended); anything else is a failure.
[ "$rc" -eq 3 ] || { cat allocate.out >&2; echo "allocate exited $rc" >&2; exit 1; }
grep -q 'allocated on node' allocate.out
venv/bin/python -c 'import dra_operator, sys; assert "site-packages" in dra_operator.__file__, sys.exit(1)'
echo "wheel OK"
