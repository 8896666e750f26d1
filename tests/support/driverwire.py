"""Build tests/driverwire: upstream's own kubelet-side gRPC clients as a small Go program.

The binary is cached by a hash of its sources under the dra-operator cache, so it is built
once per change (~15 s warm, about a minute with a cold Go build cache). Without Go the test
that needs it skips, and fails under CI=true, like every test that needs a binary.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane

SOURCE = Path(__file__).resolve().parents[1] / "driverwire"


def driverwire() -> Path:
    """The built program (building it first if its sources changed)."""
    go = shutil.which("go")
    if go is None:
        skip_or_fail("driverwire needs the Go toolchain (`go` on PATH)")
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((SOURCE / name).read_bytes())
    binary = (
        controlplane.cache_root().parent / "driverwire" / digest.hexdigest()[:16] / "driverwire"
    )
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["nice", "-n", "10", go, "build", "-mod=readonly", "-trimpath", "-o", str(binary), "."],
            cwd=SOURCE,
            env={**os.environ, "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"building {SOURCE} failed:\n{done.stderr}", pytrace=False)
    return binary
