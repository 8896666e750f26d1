"""The AllocationPolicy status writer over real stores, with a fake writer at the Protocol seam.

Covers: the first pass writes Accepted with the claims each policy governs and Invalid with a
message for a policy naming an unknown hook; a pass over unchanged inputs writes nothing (our
own write coming back through the watch included); a change of the governed claims writes the
new count and keeps the condition's transition time; a policy deleted meanwhile is skipped.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from typing import Any

import pytest

from dra_operator import errors
from dra_operator.cluster import CLAIM_INDEXERS, ObjectKey, Store
from dra_operator.controllers.policies import ALL_POLICIES, PolicyStatusReconciler
from dra_operator.hooks import AllocationPolicy, parse_allocation_policy
from dra_operator.model import ResourceClaim, parse_resource_claim

pytestmark = pytest.mark.asyncio(loop_scope="function")

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def _policy(name: str, generation: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "dra-operator.dev/v1alpha1",
        "kind": "AllocationPolicy",
        "metadata": {"name": name, "generation": generation, "resourceVersion": "1"},
        "spec": spec,
    }


def _claim(name: str, class_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {
            "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": class_name}}]}
        },
    }


class FakeWriter:
    """Records writes and plays them back into the policy store, as the watch would."""

    def __init__(self, policies: Store[AllocationPolicy]) -> None:
        self.policies = policies
        self.written: list[tuple[str, dict[str, Any]]] = []
        self.missing: set[str] = set()

    async def write_status(self, name: str, status: Mapping[str, Any]) -> None:
        if name in self.missing:
            raise errors.APINotFoundError(404, "NotFound", f"{name} not found")
        self.written.append((name, dict(status)))
        entry = self.policies.get(ObjectKey("", name))
        assert entry is not None
        raw = copy.deepcopy(dict(entry.raw))
        raw["status"] = copy.deepcopy(dict(status))
        raw["metadata"]["resourceVersion"] = str(int(raw["metadata"]["resourceVersion"]) + 1)
        self.policies.apply("MODIFIED", raw)


class Scene:
    def __init__(self, *policies: dict[str, Any]) -> None:
        self.now = T0
        self.policies: Store[AllocationPolicy] = Store("AllocationPolicy", parse_allocation_policy)
        self.claims: Store[ResourceClaim] = Store(
            "ResourceClaim", lambda raw: parse_resource_claim(raw, "v1"), CLAIM_INDEXERS
        )
        self.namespaces: Store[Mapping[str, str]] = Store("Namespace", lambda raw: {})
        for raw in policies:
            self.policies.apply("ADDED", raw)
        self.writer = FakeWriter(self.policies)
        self.reconcile = PolicyStatusReconciler(
            policies=self.policies,
            claims=self.claims,
            namespaces=self.namespaces,
            known_hooks=frozenset({"known"}),
            writer=self.writer,
            clock=lambda: self.now,
        )


def _conditions(status: Mapping[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}


async def test_first_pass_writes_accepted_counts_and_invalid_with_a_message() -> None:
    scene = Scene(
        _policy("gpus", deviceClassNames=["gpu"], hooks=["known"]),
        _policy("broken", generation=3, hooks=["unknown"]),
    )
    for name in ("a", "b"):
        scene.claims.apply("ADDED", _claim(name, "gpu"))
    scene.claims.apply("ADDED", _claim("c", "fpga"))

    await scene.reconcile(ALL_POLICIES)

    written = dict(scene.writer.written)
    assert written["gpus"]["governedClaims"] == 2
    assert written["gpus"]["observedGeneration"] == 1
    assert _conditions(written["gpus"]) == {
        "Accepted": ("True", "Accepted", ""),
        "Invalid": ("False", "Accepted", ""),
    }
    assert written["broken"]["governedClaims"] == 0
    assert written["broken"]["observedGeneration"] == 3
    message = "unknown hooks: unknown (not loaded by the operator)"
    assert _conditions(written["broken"]) == {
        "Accepted": ("False", "Invalid", message),
        "Invalid": ("True", "Invalid", message),
    }


async def test_unchanged_inputs_write_nothing() -> None:
    scene = Scene(_policy("gpus", deviceClassNames=["gpu"]))
    scene.claims.apply("ADDED", _claim("a", "gpu"))
    await scene.reconcile(ALL_POLICIES)
    scene.now += datetime.timedelta(minutes=5)

    for _ in range(3):
        await scene.reconcile(ALL_POLICIES)

    assert [name for name, _ in scene.writer.written] == ["gpus"]


async def test_a_new_claim_writes_the_new_count_and_keeps_transition_times() -> None:
    scene = Scene(_policy("gpus", deviceClassNames=["gpu"]))
    await scene.reconcile(ALL_POLICIES)
    scene.now += datetime.timedelta(minutes=5)
    scene.claims.apply("ADDED", _claim("a", "gpu"))

    await scene.reconcile(ALL_POLICIES)

    first, second = (status for _, status in scene.writer.written)
    assert (first["governedClaims"], second["governedClaims"]) == (0, 1)
    assert first["conditions"] == second["conditions"]


async def test_a_policy_deleted_meanwhile_is_skipped() -> None:
    scene = Scene(_policy("gone"), _policy("kept", deviceClassNames=["gpu"]))
    scene.writer.missing.add("gone")

    await scene.reconcile(ALL_POLICIES)

    assert [name for name, _ in scene.writer.written] == ["kept"]
