"""Start-up decisions of `dra-operator run` against the real API server.

Covers: the served versions and release are discovered (v1 claims, v1beta2 DeviceTaintRules on
1.36); while kube-controller-manager's leader Lease is held, the claims controller is left to it
unless --controllers names it; without the Lease it runs. (Handing over while running:
tests/integration/test_coexistence.py.)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from dra_operator import app, controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import LEASES, Client

pytestmark = pytest.mark.controlplane


@pytest.fixture
async def kube_controller_manager_lease(admin_api: Client) -> AsyncIterator[None]:
    """kube-controller-manager's leader Lease, as a running one keeps it; removed after."""
    body = {
        "apiVersion": LEASES.api_version,
        "kind": "Lease",
        "metadata": {"name": app.KCM_LEASE_NAME, "namespace": app.KCM_LEASE_NAMESPACE},
        "spec": {"holderIdentity": "kcm-0", "leaseDurationSeconds": 15},
    }
    await admin_api.create(LEASES, body)
    try:
        yield
    finally:
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(LEASES, app.KCM_LEASE_NAME, namespace=app.KCM_LEASE_NAMESPACE)


async def test_discovery_picks_the_newest_served_versions(
    control_plane: controlplane.ControlPlaneState, operator_api: Client
) -> None:
    """1.37 serves DeviceTaintRule in v1 and gets 1.37's allocator rules; 1.36 in v1beta2."""
    server = await app.discover(operator_api)
    minor = controlplane.minor_of(control_plane.version)
    assert server.git_version == control_plane.version
    assert server.minor == minor
    assert server.versions["resourceclaims"] == "v1"
    assert server.versions["devicetaintrules"] == ("v1" if minor >= 37 else "v1beta2")
    assert server.features.consumable_capacity
    assert server.features.release == min(minor, 37)


async def test_claims_run_without_kube_controller_manager(operator_api: Client) -> None:
    operator = await app.build_operator(app.Settings(), operator_api)
    assert "claims" in operator.wanted()


@pytest.mark.usefixtures("kube_controller_manager_lease")
@pytest.mark.parametrize(
    ("requested", "runs_claims"),
    [
        pytest.param(None, False, id="left-to-kube-controller-manager"),
        pytest.param(frozenset({"claims"}), True, id="explicit-controllers-win"),
    ],
)
async def test_claims_beside_kube_controller_manager(
    operator_api: Client, requested: frozenset[str] | None, runs_claims: bool
) -> None:
    operator = await app.build_operator(app.Settings(controllers=requested), operator_api)
    assert ("claims" in operator.wanted()) is runs_claims
