"""Which cluster the suite runs against, and who runs the operator there.

Two inputs decide it, the same ones e2e/kind/run.sh sets: KUBECONFIG (its first entry, as
`dra-operator` itself reads it) selects a real cluster; without it the suite uses the local
session control plane. DRA_OPERATOR_E2E_OPERATOR=deployed says the operator runs in the
cluster, so the suite only waits for its leader Lease: with KUBECONFIG it is already installed
there (e2e/kind/run.sh); locally the suite installs it itself (`_install`: the image of
`make image` on the real nodes, deploy/ applied with kubectl). Any other value (or none) makes
the suite start `dra-operator run` for the namespaces of its tests.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from tests.support.operator import wait_for

from dra_operator.controlplane import ControlPlaneState, NodeState
from dra_operator.errors import APINotFoundError
from dra_operator.kube import LEASES, Client

__all__ = [
    "DEPLOYED",
    "DEPLOYED_LEASE",
    "OPERATOR_ENV",
    "ClusterChoice",
    "Target",
    "choose",
    "wait_for_leader",
]

OPERATOR_ENV = "DRA_OPERATOR_E2E_OPERATOR"
DEPLOYED = "deployed"
# deploy/base: POD_NAMESPACE is the Lease namespace, and `run`'s default --lease-name.
DEPLOYED_LEASE = ("dra-operator-system", "dra-operator")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterChoice:
    """What the environment asks for: a kubeconfig (None: the local control plane) and
    whether the operator is already deployed there."""

    kubeconfig: Path | None
    deployed: bool


def choose(environ: Mapping[str, str]) -> ClusterChoice:
    """Read KUBECONFIG and DRA_OPERATOR_E2E_OPERATOR; refuse combinations that cannot work."""
    mode = environ.get(OPERATOR_ENV, "")
    if mode not in ("", DEPLOYED):
        raise ValueError(f"{OPERATOR_ENV}={mode!r}: only {DEPLOYED!r} or unset is understood")
    first = next((p for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p), None)
    return ClusterChoice(kubeconfig=Path(first) if first else None, deployed=mode == DEPLOYED)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """The chosen cluster.

    `kubeconfig` is the admin identity the suite acts as (pods, slices, `verify`); an operator
    the suite starts runs as `operator_kubeconfig`: locally the RBAC-limited identity bound to
    deploy/'s ClusterRole, on a given cluster the kubeconfig's own identity. Locally,
    `control_plane` is the session control plane with its real nodes (kubelet + containerd),
    where pods run and the simulated driver prepares their devices.
    """

    kubeconfig: Path
    operator_kubeconfig: Path
    local: bool
    deployed: bool
    control_plane: ControlPlaneState | None = None

    @property
    def real_nodes(self) -> tuple[NodeState, ...]:
        return self.control_plane.nodes if self.control_plane else ()


def _renewed(lease: Mapping[str, object]) -> str:
    spec = lease.get("spec")
    return str(spec.get("renewTime") or "") if isinstance(spec, Mapping) else ""


async def wait_for_leader(
    api: Client,
    namespace: str,
    name: str,
    *,
    identity: str | None = None,
    timeout: float = 60.0,
    check: Callable[[], None] | None = None,
) -> str:
    """The holder of Lease `namespace/name`, once it leads.

    With `identity`, that holder must be it. Without, the holder must be seen renewing (two
    different renewTimes): a Lease left by a crashed operator has a holder but no renewals,
    and comparing renewTime with our own clock would trust the clocks to agree. `check` runs
    before each look and may fail the test early (the operator process died).
    """
    first_renewal: list[str] = []

    async def holder() -> str | None:
        if check is not None:
            check()
        try:
            lease = await api.get(LEASES, name, namespace=namespace)
        except APINotFoundError:
            return None
        found = str((lease.get("spec") or {}).get("holderIdentity") or "")
        if not found:
            return None
        if identity is not None:
            return found if found == identity else None
        renewed = _renewed(lease)
        if not first_renewal:
            first_renewal.append(renewed)
        return found if renewed != first_renewal[0] else None

    what = f"a leader renewing Lease {namespace}/{name}"
    return await wait_for(holder, timeout=timeout, what=what)
