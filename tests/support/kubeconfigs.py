"""Kubeconfigs the tests write: one whose user is the test `exec` credential plugin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

__all__ = ["PLUGIN", "exec_kubeconfig"]

PLUGIN = Path(__file__).parents[1] / "data" / "exec_credential.py"


def exec_kubeconfig(
    path: Path, server: str, token_file: Path, calls: Path, *, ttl: int | None, ca: str = ""
) -> Path:
    """A kubeconfig whose only user runs the test plugin."""
    args = [str(PLUGIN), str(token_file), str(calls)] + ([str(ttl)] if ttl is not None else [])
    cluster: dict[str, Any] = {"server": server}
    if ca:
        cluster["certificate-authority"] = ca
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [
            {
                "name": "plugin",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": sys.executable,
                        "args": args,
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "contexts": [{"name": "via-plugin", "context": {"cluster": "c", "user": "plugin"}}],
        "current-context": "via-plugin",
    }
    path.write_text(yaml.safe_dump(doc))
    return path
