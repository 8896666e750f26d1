"""The operator's caches: one store per kind, the ledger and deleted pods moved by events.

Covers: a claim event moves the ledger (allocation in, deletion out); a pod deletion is
remembered by UID; an object that does not parse is reported once per resourceVersion and
changes nothing; DeviceTaintRules have a store only when served, AllocationPolicies and namespace
labels only when the CRD is; the storage kinds the volume plugins read are always watched; a
relist's prune forgets what the fresh
LIST lacks unless seen after it, in the LIST's namespace only when it covered one; a pod or claim
event that leaves the spec as it was reuses its parsed spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.support.make import MakeClaim, MakePod

from dra_operator import errors
from dra_operator.app import Caches, Kind
from dra_operator.cluster import ObjectKey
from dra_operator.model import DeviceID

VERSIONS = {
    "resourceclaims": "v1",
    "resourceclaimtemplates": "v1",
    "deviceclasses": "v1",
    "resourceslices": "v1",
}
DEVICE = DeviceID("gpu.example.com", "pool", "gpu-0")


def claim(rv: str, *, allocated: bool = True, bad: bool = False) -> dict[str, Any]:
    made = MakeClaim().version(rv)
    if allocated:
        made.allocated(DEVICE.driver, DEVICE.pool, DEVICE.device)
    if bad:
        made.requests("not-a-list")
    return made.obj()


def pod(rv: str, ns: str = "ns") -> dict[str, Any]:
    return MakePod().namespace(ns).version(rv).obj()


def test_claim_events_move_the_ledger() -> None:
    caches = Caches(VERSIONS)
    caches.apply(Kind.CLAIMS, None, claim("1"))
    assert caches.ledger.is_in_use(DEVICE)
    caches.apply(Kind.CLAIMS, "MODIFIED", claim("2", allocated=False))
    assert not caches.ledger.is_in_use(DEVICE)
    caches.apply(Kind.CLAIMS, "MODIFIED", claim("3"))
    caches.apply(Kind.CLAIMS, "DELETED", claim("3"))
    assert not caches.ledger.is_in_use(DEVICE)


def test_a_pod_deletion_is_remembered() -> None:
    caches = Caches(VERSIONS)
    caches.apply(Kind.PODS, "ADDED", pod("1"))
    change = caches.apply(Kind.PODS, "DELETED", pod("1"))
    assert change is not None and change.new is None
    assert "pod-uid" in caches.deleted_pods


def test_an_invalid_object_is_reported_once_and_keeps_the_last_good_version() -> None:
    reports: list[tuple[Kind, str]] = []

    def on_invalid(kind: Kind, raw: Mapping[str, Any], exc: errors.InvalidObjectError) -> None:
        reports.append((kind, raw["metadata"]["resourceVersion"]))

    caches = Caches(VERSIONS, on_invalid=on_invalid)
    caches.apply(Kind.CLAIMS, "ADDED", claim("1"))
    assert caches.apply(Kind.CLAIMS, "MODIFIED", claim("2", bad=True)) is None
    assert caches.apply(Kind.CLAIMS, "MODIFIED", claim("2", bad=True)) is None
    assert reports == [(Kind.CLAIMS, "2")]
    assert caches.ledger.is_in_use(DEVICE)


def test_invalid_objects_are_forgotten_once_deleted_or_valid_again() -> None:
    """The report memory holds only objects that exist and do not parse, however many came and
    went (it grew by every invalid object ever seen, a leak under churn of bad objects)."""
    reports: list[str] = []
    caches = Caches(VERSIONS, on_invalid=lambda kind, raw, exc: reports.append(kind))
    for n in range(100):
        bad = claim(str(n), bad=True)
        bad["metadata"]["name"] = f"c-{n}"
        caches.apply(Kind.CLAIMS, "ADDED", bad)
        caches.apply(Kind.CLAIMS, "DELETED", bad)
    caches.apply(Kind.CLAIMS, "ADDED", claim("200", bad=True))
    caches.apply(Kind.CLAIMS, "MODIFIED", claim("201"))  # valid again
    gone = claim("300", bad=True)
    gone["metadata"]["name"] = "deleted-unseen"
    caches.apply(Kind.CLAIMS, "ADDED", gone)
    caches.prune(Kind.CLAIMS, [claim("201")], snapshot=400)
    assert len(reports) == 100 + 1 + 1  # each bad object reported once, deletions included
    assert not caches._reported  # the memory itself is what must stay bounded
    caches.apply(Kind.CLAIMS, "MODIFIED", claim("202", bad=True))
    assert len(reports) == 103  # broken again: reported again


def test_taint_rules_are_watched_only_when_served() -> None:
    assert Kind.TAINT_RULES not in Caches(VERSIONS).kinds
    served = Caches({**VERSIONS, "devicetaintrules": "v1beta2"})
    assert served.taint_rules is not None and Kind.TAINT_RULES in served.kinds


def test_storage_kinds_are_always_watched() -> None:
    caches = Caches(VERSIONS)
    storage = {
        Kind.PERSISTENT_VOLUMES,
        Kind.PERSISTENT_VOLUME_CLAIMS,
        Kind.STORAGE_CLASSES,
        Kind.CSI_NODES,
        Kind.CSI_DRIVERS,
    }
    assert storage <= set(caches.kinds)
    pvc = {
        "metadata": {"name": "data", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"storageClassName": "local", "resources": {"requests": {"storage": "1Gi"}}},
    }
    caches.apply(Kind.PERSISTENT_VOLUME_CLAIMS, "ADDED", pvc)
    stored = caches.persistent_volume_claims.get(ObjectKey("ns", "data"))
    assert stored is not None and stored.obj.storage_class == "local"
    caches.apply(Kind.CSI_NODES, "ADDED", {"metadata": {"name": "n", "resourceVersion": "1"}})
    assert caches.csi_nodes.get(ObjectKey("", "n")) is not None


def test_policies_and_namespace_labels_are_watched_only_when_the_crd_is_served() -> None:
    assert Kind.POLICIES not in Caches(VERSIONS).kinds
    caches = Caches(VERSIONS, policies=True)
    assert caches.namespaces is not None and caches.policies is not None
    assert {Kind.POLICIES, Kind.NAMESPACES} <= set(caches.kinds)
    namespace = {"metadata": {"name": "ns", "resourceVersion": "1", "labels": {"team": "ml"}}}
    policy = {
        "metadata": {"name": "p", "generation": 2, "resourceVersion": "1"},
        "spec": {"strategy": "Spread"},
    }

    caches.apply(Kind.NAMESPACES, "ADDED", namespace)
    caches.apply(Kind.POLICIES, "ADDED", policy)

    assert [dict(e.obj) for e in caches.namespaces] == [{"team": "ml"}]
    assert [(e.obj.name, e.obj.strategy, e.obj.generation) for e in caches.policies] == [
        ("p", "Spread", 2)
    ]


def test_prune_forgets_what_a_relist_lacks_and_keeps_what_is_newer() -> None:
    """A claim deleted while the watch was down leaves the store and frees its device; a pod
    seen after the LIST's resourceVersion stays (it was created after the LIST)."""
    caches = Caches(VERSIONS)
    caches.apply(Kind.CLAIMS, None, claim("5"))
    caches.apply(Kind.PODS, "ADDED", pod("12"))

    pruned = caches.prune(Kind.CLAIMS, [], 10)
    kept = caches.prune(Kind.PODS, [], 10)

    assert [str(change.key) for change in pruned] == ["ns/c"]
    assert pruned[0].new is None
    assert not caches.ledger.is_in_use(DEVICE)
    assert kept == [] and len(caches.pods) == 1


def test_prune_keeps_listed_objects_and_remembers_pruned_pods() -> None:
    caches = Caches(VERSIONS)
    caches.apply(Kind.CLAIMS, None, claim("5"))
    caches.apply(Kind.PODS, "ADDED", pod("6"))

    assert caches.prune(Kind.CLAIMS, [claim("5")], 10) == []
    assert len(caches.prune(Kind.PODS, [], 10)) == 1
    assert "pod-uid" in caches.deleted_pods


def test_a_namespace_lists_prune_leaves_other_namespaces_alone() -> None:
    caches = Caches(VERSIONS)
    caches.apply(Kind.PODS, "ADDED", pod("5", ns="a"))
    caches.apply(Kind.PODS, "ADDED", pod("6", ns="b"))

    pruned = caches.prune(Kind.PODS, [], 10, namespace="a")

    assert [str(change.key) for change in pruned] == ["a/p"]
    assert [str(entry.key) for entry in caches.pods] == ["b/p"]


def test_an_event_that_leaves_the_spec_alone_reuses_its_parsed_spec() -> None:
    caches = Caches(VERSIONS)
    caches.apply(Kind.PODS, "ADDED", pod("1"))
    caches.apply(Kind.CLAIMS, "ADDED", claim("1", allocated=False))
    first_pod = caches.pods.get(ObjectKey("ns", "p"))
    first_claim = caches.claims.get(ObjectKey("ns", "c"))

    running = pod("2") | {"status": {"phase": "Running"}}
    caches.apply(Kind.PODS, "MODIFIED", running)
    caches.apply(Kind.CLAIMS, "MODIFIED", claim("2"))

    now_pod = caches.pods.get(ObjectKey("ns", "p"))
    now_claim = caches.claims.get(ObjectKey("ns", "c"))
    assert first_pod and now_pod and first_claim and now_claim
    assert now_pod.obj.spec is first_pod.obj.spec and now_pod.obj.status.phase == "Running"
    assert now_claim.obj.spec is first_claim.obj.spec and now_claim.obj.status.allocation
    moved = pod("3")
    moved["spec"] = {**moved["spec"], "nodeName": "n"}
    caches.apply(Kind.PODS, "MODIFIED", moved)
    moved_pod = caches.pods.get(ObjectKey("ns", "p"))
    assert moved_pod and moved_pod.obj.spec.node_name == "n"


def test_pod_disruption_budgets_are_watched_only_for_the_scheduler() -> None:
    assert Kind.PDBS not in Caches(VERSIONS).kinds
    caches = Caches(VERSIONS, pod_disruption_budgets=True)
    assert caches.pdbs is not None and Kind.PDBS in caches.kinds
    raw = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "ns", "uid": "u", "resourceVersion": "1"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 1},
    }
    caches.apply(Kind.PDBS, "ADDED", raw)
    [budget] = [entry.obj for entry in caches.pdbs]
    assert budget.disruptions_allowed == 1
