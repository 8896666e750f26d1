"""`kubectl dra explain` with a kubeconfig whose user is an `exec` credential plugin.

The plugin (tests/data/exec_credential.py) hands out a ServiceAccount token the real
kube-apiserver issued through the TokenRequest API; the ServiceAccount is bound to the
operator's ClusterRole from deploy/. A token the server does not accept fails the command with
exit status 2 (the cluster could not be read).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_command
from tests.support.kubeconfigs import exec_kubeconfig

from dra_operator import controlplane
from dra_operator.controlplane._rbac import CLUSTER_ROLE_BINDINGS
from dra_operator.kube import Client, Resource, dra

pytestmark = pytest.mark.controlplane

SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", namespaced=True)
CLAIMS = dra("resourceclaims")


async def _service_account_token(api: Client, namespace: str) -> str:
    """A ServiceAccount bound to the operator's ClusterRole, and a token for it."""
    await api.create(
        SERVICE_ACCOUNTS,
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "viewer"}},
        namespace=namespace,
    )
    binding: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"dra-operator:{namespace}:viewer"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "dra-operator",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": namespace}],
    }
    await api.create(CLUSTER_ROLE_BINDINGS, binding)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    answer = await api.request(
        "POST",
        SERVICE_ACCOUNTS.path(namespace=namespace, name="viewer") + "/token",
        body=request,
    )
    token: str = answer["status"]["token"]
    return token


async def test_explain_with_an_exec_plugin_kubeconfig(
    control_plane: controlplane.ControlPlaneState,
    admin_api: Client,
    namespace: str,
    tmp_path: Path,
) -> None:
    token_file, calls = tmp_path / "token", tmp_path / "calls"
    token_file.write_text(await _service_account_token(admin_api, namespace))
    kubeconfig = exec_kubeconfig(
        tmp_path / "kubeconfig",
        control_plane.server,
        token_file,
        calls,
        ttl=600,
        ca=str(control_plane.ca_file),
    )
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "wants"},
        "spec": {"devices": {"requests": []}},
    }
    await admin_api.create(CLAIMS, claim, namespace=namespace)
    try:
        code, out = await run_command(
            "kubectl-dra", kubeconfig, "explain", "claim", "wants", "-n", namespace
        )
        assert code == 3, out  # read and explained: no node publishes devices for it
        assert f"not allocated: {namespace}/wants" in out
        assert calls.read_text().splitlines() == ["run"]

        token_file.write_text("not-a-token")
        code, out = await run_command(
            "kubectl-dra", kubeconfig, "explain", "claim", "wants", "-n", namespace
        )
        assert code == 2, out
        assert "cannot read the cluster" in out and "401" in out
    finally:
        await admin_api.delete(CLUSTER_ROLE_BINDINGS, f"dra-operator:{namespace}:viewer")
