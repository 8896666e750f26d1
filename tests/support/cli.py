"""Run this Python's console scripts (the code under test) against a cluster."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

__all__ = ["BIN", "run_command"]

BIN = Path(sys.executable).parent


async def run_command(program: str, kubeconfig: Path, *args: str) -> tuple[int, str]:
    """`program ARGS... --kubeconfig KUBECONFIG`: exit status and output (stdout + stderr)."""
    proc = await asyncio.create_subprocess_exec(
        str(BIN / program),
        *args,
        "--kubeconfig",
        str(kubeconfig),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode()
