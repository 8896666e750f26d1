"""Binding the `operator` identity to the ClusterRole that deploy/ ships, and nothing else.

The role is read from the manifests themselves (a YAML file, or a kustomize directory rendered
by the built kubectl), never from a copy, so a missing rule in deploy/ fails the integration
tests exactly as it would fail in a cluster.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from dra_operator.errors import ControlPlaneError
from dra_operator.kube import Client, Resource

__all__ = ["CLUSTER_ROLES", "CLUSTER_ROLE_BINDINGS", "bind_cluster_roles", "load_cluster_roles"]

CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", namespaced=False)
CLUSTER_ROLE_BINDINGS = Resource(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", namespaced=False
)
_FIELD_MANAGER = "dra-operator-controlplane"


def load_cluster_roles(path: Path, kubectl: Path | None = None) -> list[dict[str, Any]]:
    """The ClusterRoles in a manifest file, or in a kustomize directory (needs `kubectl`)."""
    if path.is_dir():
        if kubectl is None:
            raise ControlPlaneError(f"{path}: rendering a kustomization needs kubectl")
        done = subprocess.run(
            [str(kubectl), "kustomize", str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if done.returncode != 0:
            raise ControlPlaneError(f"{path}: kubectl kustomize failed: {done.stderr.strip()}")
        text = done.stdout
    else:
        text = path.read_text()
    roles = [
        doc
        for doc in yaml.safe_load_all(text)
        if isinstance(doc, dict) and doc.get("kind") == "ClusterRole"
    ]
    if not roles:
        raise ControlPlaneError(f"{path}: no ClusterRole found")
    return roles


async def bind_cluster_roles(admin: Client, roles: list[dict[str, Any]], user: str) -> None:
    """Apply each ClusterRole and bind it to `user`.

    The binding is named `<role>:user:<user>`, so it never replaces deploy/'s own binding of
    the same role to the operator's ServiceAccount when both are applied to one cluster.
    """
    for role in roles:
        name = role["metadata"]["name"]
        await admin.apply(CLUSTER_ROLES, role, field_manager=_FIELD_MANAGER, force=True)
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{name}:user:{user}"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": name,
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
        await admin.apply(CLUSTER_ROLE_BINDINGS, binding, field_manager=_FIELD_MANAGER, force=True)
