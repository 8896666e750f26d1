"""The claims reconcile end to end over real stores, with a fake `ClaimsWriter` world.

The fake keeps claims and pods like a server would (resourceVersion preconditions, generated
names) so the tests assert the state of that world, not the calls made. Covers: a claim created
once even when the pod status write fails and the retry runs before the watch shows the claim;
the creation-failed event; pruning that asks the server about a pod the cache does not know,
then deallocates and removes the finalizer in chained writes; a 409 that fails the reconcile
without changing anything; reservation of a pod bound without us; deletion of a finished pod's
claim.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from dra_operator import errors, names
from dra_operator.cluster import (
    CLAIM_INDEXERS,
    POD_INDEXERS,
    ObjectKey,
    RecentlyDeleted,
    Store,
)
from dra_operator.controllers.claims import (
    ClaimsFeatures,
    ClaimsReconciler,
    Event,
    StoreView,
    WorkKey,
)
from dra_operator.model import (
    Pod,
    ResourceClaim,
    ResourceClaimTemplate,
    parse_pod,
    parse_resource_claim,
    parse_resource_claim_template,
)

pytestmark = pytest.mark.asyncio(loop_scope="function")

NS = "ns"
POD_KEY = WorkKey("pod", NS, "train")


class World:
    """What the API server would hold; implements ClaimsWriter."""

    def __init__(self) -> None:
        self.claims: dict[str, dict[str, Any]] = {}
        self.pods: dict[str, dict[str, Any]] = {}
        self.events: list[Event] = []
        self.pod_statuses: dict[str, list[dict[str, Any]]] = {}
        self.version = 100
        self.fail_apply = 0
        self.fail_create: errors.APIError | None = None
        self.lists = 0
        self.gets = 0
        self.fail_get: errors.APIError | None = None
        self.lose_create_answers = 0

    def _bump(self, body: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        body["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(body)

    def _check(self, body: Mapping[str, Any]) -> dict[str, Any]:
        name = body["metadata"]["name"]
        current = self.claims.get(name)
        if current is None:
            raise errors.APINotFoundError(404, "NotFound", f'resourceclaims "{name}" not found')
        if current["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]:
            raise errors.APIConflictError(409, "Conflict", "the object has been modified")
        return current

    async def create_claim(self, namespace: str, manifest: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.fail_create is not None:
            raise self.fail_create
        body = copy.deepcopy(dict(manifest))
        name = body["metadata"].pop("generateName") + f"{len(self.claims):05d}"
        body["metadata"].update(name=name, uid=f"uid-{name}")
        self.claims[name] = body
        if self.lose_create_answers:  # the claim landed, the answer did not
            self.lose_create_answers -= 1
            raise errors.APIServerError(0, "Unreachable", "connection reset by peer")
        return self._bump(body)

    async def list_claims(self, namespace: str) -> list[Mapping[str, Any]]:
        self.lists += 1
        return [copy.deepcopy(c) for c in self.claims.values()]

    async def apply_pod_status(self, namespace: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.fail_apply:
            self.fail_apply -= 1
            raise errors.APIServerError(500, "InternalError", "etcd is sad")
        name = body["metadata"]["name"]
        self.pod_statuses[name] = body["status"]["resourceClaimStatuses"]
        pod = copy.deepcopy(self.pods.get(name) or dict(body))
        pod.setdefault("status", {})["resourceClaimStatuses"] = self.pod_statuses[name]
        self.pods[name] = pod
        return self._bump(pod)

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        current = self._check(body)
        current["status"] = copy.deepcopy(body.get("status", {}))
        return self._bump(current)

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        current = self._check(body)
        current["metadata"]["finalizers"] = list(body["metadata"].get("finalizers", []))
        return self._bump(current)

    async def delete_claim(self, key: ObjectKey, uid: str) -> None:
        if key.name in self.claims and self.claims[key.name]["metadata"]["uid"] == uid:
            del self.claims[key.name]

    async def get_pod(self, namespace: str, name: str) -> Pod | None:
        raw = self.pods.get(name)
        return parse_pod(raw) if raw else None

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        self.gets += 1
        if self.fail_get is not None:
            raise self.fail_get
        raw = self.claims.get(name)
        return parse_resource_claim(raw) if raw else None

    async def emit(self, event: Event) -> None:
        self.events.append(event)


class Cluster:
    """Stores fed like the watch would, a world behind the writer, and the reconciler."""

    def __init__(self, *, recheck: bool = True, since_137: bool = False) -> None:
        self.world = World()
        self.pods: Store[Pod] = Store("pods", parse_pod, POD_INDEXERS)
        self.claims: Store[ResourceClaim] = Store(
            "resourceclaims", parse_resource_claim, CLAIM_INDEXERS
        )
        self.templates: Store[ResourceClaimTemplate] = Store(
            "resourceclaimtemplates", parse_resource_claim_template
        )
        view = StoreView(self.pods, self.claims, self.templates, RecentlyDeleted())
        self.created: list[tuple[bool, bool]] = []
        self.reconcile = ClaimsReconciler(
            view,
            self.claims,
            self.world,
            ClaimsFeatures(since_137=since_137),
            on_created=lambda ok, admin: self.created.append((ok, admin)),
            pods=self.pods,
            recheck=lambda: recheck,
        )

    def add_pod(self, raw: dict[str, Any], *, cached: bool = True) -> None:
        self.world.pods[raw["metadata"]["name"]] = raw
        if cached:
            self.pods.apply("ADDED", raw)

    def add_claim(self, raw: dict[str, Any]) -> None:
        self.world.claims[raw["metadata"]["name"]] = copy.deepcopy(raw)
        self.claims.apply("ADDED", raw)


def pod_raw(name: str = "train", uid: str = "uid-train", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": "1"},
        "spec": {
            "containers": [{"name": "c"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
            **extra.get("spec", {}),
        },
        "status": extra.get("status", {}),
    }


TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "gpu", "namespace": NS, "resourceVersion": "1"},
    "spec": {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
    },
}


def claim_raw(name: str, **fields: Any) -> dict[str, Any]:
    metadata = {"name": name, "namespace": NS, "uid": f"uid-{name}", "resourceVersion": "50"}
    metadata.update(fields.get("metadata", {}))
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": fields.get("status", {}),
    }


ALLOCATION = {"devices": {"results": [{"request": "g", "driver": "d", "pool": "p", "device": "x"}]}}


async def test_a_claim_is_created_once_even_when_the_pod_status_write_fails() -> None:
    cluster = Cluster()
    cluster.templates.apply("ADDED", TEMPLATE)
    cluster.add_pod(pod_raw())
    cluster.world.fail_apply = 1
    with pytest.raises(errors.APIServerError):
        await cluster.reconcile(POD_KEY)
    await cluster.reconcile(POD_KEY)  # the retry, before any claim watch event
    assert list(cluster.world.claims) == ["train-gpu-00000"]
    claim = cluster.world.claims["train-gpu-00000"]
    assert claim["metadata"]["labels"] == {"team": "ml"}
    assert claim["metadata"]["annotations"] == {names.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "uid-train"
    assert cluster.world.pod_statuses == {
        "train": [{"name": "gpu", "resourceClaimName": "train-gpu-00000"}]
    }
    assert cluster.created == [(True, False)]  # resourceclaim_controller_creates_total


async def test_a_claim_another_controller_just_created_is_used_not_duplicated() -> None:
    """kube-controller-manager created it during a handover; our cache has not seen it."""
    cluster = Cluster()
    cluster.templates.apply("ADDED", TEMPLATE)
    cluster.add_pod(pod_raw())
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "uid-train"}
    theirs = claim_raw(
        "train-gpu-kcm01",
        metadata={
            "annotations": {names.POD_CLAIM_NAME_ANNOTATION: "gpu"},
            "ownerReferences": [{**owner, "controller": True}],
        },
    )
    cluster.world.claims["train-gpu-kcm01"] = theirs  # on the server only
    await cluster.reconcile(POD_KEY)
    assert list(cluster.world.claims) == ["train-gpu-kcm01"]
    assert cluster.world.pod_statuses == {
        "train": [{"name": "gpu", "resourceClaimName": "train-gpu-kcm01"}]
    }
    assert cluster.created == []


async def test_the_server_is_asked_only_right_after_a_handover() -> None:
    """Outside a handover the cache is the whole picture: no LIST per creation."""
    for recheck, lists in ((True, 1), (False, 0)):
        cluster = Cluster(recheck=recheck)
        cluster.templates.apply("ADDED", TEMPLATE)
        cluster.add_pod(pod_raw())
        await cluster.reconcile(POD_KEY)
        assert list(cluster.world.claims) == ["train-gpu-00000"]
        assert cluster.world.lists == lists


async def test_a_create_without_an_answer_is_looked_up_before_trying_again() -> None:
    """The claim landed but its answer was lost: the next try finds it, creates no second."""
    cluster = Cluster(recheck=False)
    cluster.templates.apply("ADDED", TEMPLATE)
    cluster.add_pod(pod_raw())
    cluster.world.lose_create_answers = 1
    with pytest.raises(errors.APIServerError):
        await cluster.reconcile(POD_KEY)
    await cluster.reconcile(POD_KEY)
    assert list(cluster.world.claims) == ["train-gpu-00000"]
    assert cluster.world.lists == 1
    assert cluster.world.pod_statuses == {
        "train": [{"name": "gpu", "resourceClaimName": "train-gpu-00000"}]
    }


@pytest.mark.parametrize(
    ("annotation", "controller"),
    [
        pytest.param("other", True, id="another-pod-claim"),
        pytest.param("gpu", False, id="owned-but-not-controlled"),
    ],
)
async def test_a_claim_for_something_else_does_not_count_as_created(
    annotation: str, controller: bool
) -> None:
    cluster = Cluster()
    cluster.templates.apply("ADDED", TEMPLATE)
    cluster.add_pod(pod_raw())
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "uid-train"}
    cluster.world.claims["unrelated"] = claim_raw(
        "unrelated",
        metadata={
            "annotations": {names.POD_CLAIM_NAME_ANNOTATION: annotation},
            "ownerReferences": [{**owner, "controller": controller}],
        },
    )
    await cluster.reconcile(POD_KEY)
    assert sorted(cluster.world.claims) == ["train-gpu-00001", "unrelated"]


async def test_the_pod_status_written_is_in_the_pod_cache_before_the_watch_shows_it() -> None:
    """The scheduler queues a template pod once its claim and this status are cached."""
    cluster = Cluster()
    cluster.templates.apply("ADDED", TEMPLATE)
    cluster.add_pod(pod_raw())
    await cluster.reconcile(POD_KEY)
    entry = cluster.pods.get(ObjectKey(NS, "train"))
    assert entry is not None
    (status,) = entry.obj.status.resource_claim_statuses
    assert status.resource_claim_name == "train-gpu-00000"


async def test_a_failed_create_emits_the_event_and_fails() -> None:
    cluster = Cluster()
    cluster.templates.apply("ADDED", TEMPLATE)
    cluster.add_pod(pod_raw())
    cluster.world.fail_create = errors.APIForbiddenError(403, "Forbidden", "quota exceeded")
    with pytest.raises(errors.APIForbiddenError):
        await cluster.reconcile(POD_KEY)
    assert [(e.reason, e.message) for e in cluster.world.events] == [
        (
            "FailedResourceClaimCreation",
            "PodResourceClaim gpu: create ResourceClaim : quota exceeded",
        )
    ]
    assert cluster.world.pod_statuses == {}
    assert cluster.created == [(False, False)]


async def test_a_missing_template_emits_the_event_and_fails() -> None:
    cluster = Cluster()
    cluster.add_pod(pod_raw())
    with pytest.raises(errors.DRAOperatorError, match="PodResourceClaim gpu: resource claim"):
        await cluster.reconcile(POD_KEY)
    assert [e.reason for e in cluster.world.events] == ["FailedResourceClaimCreation"]


async def test_a_vanished_consumer_is_checked_with_the_server_then_released() -> None:
    cluster = Cluster()
    reserved = {"resource": "pods", "name": "gone", "uid": "uid-gone"}
    cluster.add_claim(
        claim_raw(
            "shared",
            metadata={"finalizers": [names.DELETE_PROTECTION_FINALIZER]},
            status={"allocation": ALLOCATION, "reservedFor": [reserved]},
        )
    )
    await cluster.reconcile(WorkKey("claim", NS, "shared"))
    claim = cluster.world.claims["shared"]
    assert claim["status"] == {}
    assert claim["metadata"]["finalizers"] == []
    assert cluster.claims.get(ObjectKey(NS, "shared")).resource_version == "102"  # type: ignore[union-attr]


async def test_a_consumer_the_server_still_has_is_kept() -> None:
    cluster = Cluster()
    cluster.add_pod(pod_raw("late", "uid-late"), cached=False)
    reserved = {"resource": "pods", "name": "late", "uid": "uid-late"}
    raw = claim_raw("shared", status={"allocation": ALLOCATION, "reservedFor": [reserved]})
    cluster.add_claim(raw)
    await cluster.reconcile(WorkKey("claim", NS, "shared"))
    assert cluster.world.claims["shared"] == raw


async def test_a_conflict_fails_the_reconcile_and_changes_nothing() -> None:
    cluster = Cluster()
    raw = claim_raw(
        "shared",
        status={
            "allocation": ALLOCATION,
            "reservedFor": [{"resource": "pods", "name": "gone", "uid": "uid-gone"}],
        },
    )
    cluster.add_claim(raw)
    cluster.world.claims["shared"]["metadata"]["resourceVersion"] = "51"  # someone wrote
    before = copy.deepcopy(cluster.world.claims)
    with pytest.raises(errors.APIConflictError):
        await cluster.reconcile(WorkKey("claim", NS, "shared"))
    assert cluster.world.claims == before


async def test_a_pod_bound_without_us_gets_its_allocated_claim_reserved() -> None:
    cluster = Cluster()
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "train",
        "uid": "uid-train",
        "controller": True,
    }
    cluster.add_claim(
        claim_raw(
            "train-gpu-x",
            metadata={
                "ownerReferences": [owner],
                "annotations": {names.POD_CLAIM_NAME_ANNOTATION: "gpu"},
            },
            status={"allocation": ALLOCATION},
        )
    )
    cluster.add_pod(
        pod_raw(
            spec={"nodeName": "node-1"},
            status={"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-gpu-x"}]},
        )
    )
    await cluster.reconcile(POD_KEY)
    assert cluster.world.claims["train-gpu-x"]["status"]["reservedFor"] == [
        {"resource": "pods", "name": "train", "uid": "uid-train"}
    ]


async def test_the_claim_of_a_finished_pod_is_deleted() -> None:
    cluster = Cluster()
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "train",
        "uid": "uid-train",
        "controller": True,
    }
    cluster.add_claim(claim_raw("train-gpu-x", metadata={"ownerReferences": [owner]}))
    cluster.add_pod(pod_raw(status={"phase": "Succeeded"}))
    await cluster.reconcile(WorkKey("claim", NS, "train-gpu-x"))
    assert cluster.world.claims == {}


def _recorded_on_server_only(cluster: Cluster) -> None:
    """The pod status names a claim another claims controller created a moment ago: the
    server has it, our cache not yet."""
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "uid-train"}
    cluster.world.claims["train-gpu-kcm01"] = claim_raw(
        "train-gpu-kcm01",
        metadata={
            "annotations": {names.POD_CLAIM_NAME_ANNOTATION: "gpu"},
            "ownerReferences": [{**owner, "controller": True}],
        },
    )
    cluster.templates.apply("ADDED", TEMPLATE)
    status = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-gpu-kcm01"}]}
    cluster.add_pod(pod_raw(status=status))


async def test_1_37_asks_the_server_before_recreating_a_recorded_claim() -> None:
    """upstream-1.37.md §7: cache first, then GET; re-create only if not found or not owned."""
    cluster = Cluster(recheck=False, since_137=True)
    _recorded_on_server_only(cluster)
    await cluster.reconcile(POD_KEY)
    assert cluster.world.gets == 1
    assert list(cluster.world.claims) == ["train-gpu-kcm01"]
    assert cluster.created == []
    del cluster.world.claims["train-gpu-kcm01"]  # deleted on the server: made again
    await cluster.reconcile(POD_KEY)
    assert [name.startswith("train-gpu-") for name in cluster.world.claims] == [True]
    assert cluster.created == [(True, False)]


async def test_1_36_recreates_a_recorded_claim_its_cache_does_not_have() -> None:
    """What 1.36's lister check does (the handover LIST is off here: `recheck` False)."""
    cluster = Cluster(recheck=False)
    _recorded_on_server_only(cluster)
    await cluster.reconcile(POD_KEY)
    assert cluster.world.gets == 0
    assert len(cluster.world.claims) == 2


async def test_a_failed_existence_check_emits_the_event_and_fails() -> None:
    cluster = Cluster(recheck=False, since_137=True)
    _recorded_on_server_only(cluster)
    cluster.world.fail_get = errors.APIServerError(503, "ServiceUnavailable", "try later")
    with pytest.raises(errors.APIServerError):
        await cluster.reconcile(POD_KEY)
    assert [e.message for e in cluster.world.events] == [
        "PodResourceClaim gpu: checking claim existence: try later"
    ]
    assert list(cluster.world.claims) == ["train-gpu-kcm01"]
