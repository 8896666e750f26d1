"""Where the Go module cache is: upstream sources that tests read (gate tables, test names).

`make controlplane` and `make oracle` download the pinned Kubernetes modules there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def module_cache() -> Path:
    """$GOMODCACHE, else what `go env` says, else Go's default."""
    env = os.environ.get("GOMODCACHE")
    if env:
        return Path(env)
    try:
        out = subprocess.run(
            ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return Path.home() / "go" / "pkg" / "mod"
    return Path(out)
