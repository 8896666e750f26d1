"""Raw objects, stores and a fake API server for the scheduler tests.

Objects are built as the API serves them (raw JSON) and parsed by the model, so the tests see
what the operator sees. `World` is the fake server: it keeps claims and pods, enforces
resourceVersion preconditions (409), binds pods and records events; `deliver` plays its
objects back through the stores as watch events would.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dra_operator import errors
from dra_operator.allocator import Features, FirstFit
from dra_operator.cluster import (
    CLAIM_INDEXERS,
    JOURNAL_LENGTH,
    POD_INDEXERS,
    SLICE_INDEXERS,
    DeviceLedger,
    ObjectKey,
    Store,
)
from dra_operator.controllers.scheduler import (
    CELSelectors,
    Event,
    Scheduler,
    Settings,
    State,
    create_body,
)
from dra_operator.controllers.scheduler.framework import NodeInfoCache
from dra_operator.model import (
    ResourceClaim,
    parse_device_class,
    parse_node,
    parse_pod,
    parse_resource_claim,
    parse_resource_slice,
)

Raw = dict[str, Any]
NS = "default"
DRIVER = "gpu.example.com"
CLASS = "gpu"
SCHEDULER = "dra-operator"
V1 = "resource.k8s.io/v1"
_uids = itertools.count(1)


def node(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[tuple[str, str, str]] = (),
    allocatable: Mapping[str, str] | None = None,
    ready: bool = True,
    unschedulable: bool = False,
) -> Raw:
    spec: Raw = {}
    if taints:
        spec["taints"] = [{"key": k, "value": v, "effect": e} for k, v, e in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"node-{name}", "labels": dict(labels or {})},
        "spec": spec,
        "status": {
            "allocatable": dict(allocatable or {"cpu": "4", "memory": "8Gi", "pods": "110"}),
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def device_class(name: str = CLASS, expression: str = f"device.driver == '{DRIVER}'") -> Raw:
    return {
        "apiVersion": V1,
        "kind": "DeviceClass",
        "metadata": {"name": name, "uid": f"class-{name}"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def device(name: str, taints: Sequence[tuple[str, str]] = ()) -> Raw:
    raw: Raw = {"name": name, "attributes": {"index": {"int": int(name.rpartition("-")[2])}}}
    if taints:
        raw["taints"] = [{"key": k, "effect": e} for k, e in taints]
    return raw


def resource_slice(node_name: str, count: int, *, taints: Sequence[tuple[str, str]] = ()) -> Raw:
    return {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}", "uid": f"slice-{node_name}"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": [device(f"gpu-{i}", taints) for i in range(count)],
        },
    }


def claim(
    name: str,
    *,
    count: int = 1,
    class_name: str = CLASS,
    owner: Raw | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Raw:
    metadata: Raw = {"name": name, "namespace": NS, "uid": f"claim-{name}-{next(_uids)}"}
    if owner is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": class_name, "count": count}}
                ]
            }
        },
    }


def pod(
    name: str,
    *,
    claims: Sequence[str] = (),
    templates: Mapping[str, str | None] | None = None,
    cpu: str | None = None,
    node_name: str = "",
    scheduler: str = SCHEDULER,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Raw] = (),
) -> Raw:
    """`claims` by name (pod claim name = claim name); `templates`: pod claim -> generated name."""
    entries: list[Raw] = [{"name": c, "resourceClaimName": c} for c in claims]
    statuses: list[Raw] = []
    for pod_claim, generated in (templates or {}).items():
        entries.append({"name": pod_claim, "resourceClaimTemplateName": "tmpl"})
        if generated is not None:
            statuses.append({"name": pod_claim, "resourceClaimName": generated})
    container: Raw = {"name": "c", "image": "busybox"}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: Raw = {"schedulerName": scheduler, "containers": [container], "resourceClaims": entries}
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = list(tolerations)
    raw: Raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": f"pod-{name}-{next(_uids)}"},
        "spec": spec,
    }
    if statuses:
        raw["status"] = {"resourceClaimStatuses": statuses}
    return raw


def new_state() -> State:
    return State(
        pods=Store("pods", parse_pod, POD_INDEXERS),
        claims=Store("resourceclaims", parse_resource_claim, CLAIM_INDEXERS),
        classes=Store("deviceclasses", parse_device_class),
        slices=Store(
            "resourceslices", parse_resource_slice, SLICE_INDEXERS, journal=JOURNAL_LENGTH
        ),
        nodes=Store("nodes", parse_node, journal=JOURNAL_LENGTH),
        ledger=DeviceLedger(),
        node_infos=NodeInfoCache(),
    )


FEATURES = Features.for_kubernetes("1.36")


def settings(features: Features = FEATURES) -> Settings:
    return Settings(features=features, policy=FirstFit(), selectors=CELSelectors(features))


Hook = Callable[[str, Mapping[str, Any]], None]


class World:
    """A fake API server holding every object; versions count up globally, like etcd's."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, ObjectKey], Raw] = {}
        self.events: list[Event] = []
        self.calls: list[str] = []
        self.before_write: Hook | None = None  # runs before a claim write is checked
        self.fail_bind: errors.APIError | None = None
        self._version = itertools.count(100)

    def put(self, kind: str, raw: Raw) -> Raw:
        stored = copy.deepcopy(raw)
        stored["metadata"]["resourceVersion"] = str(next(self._version))
        self.objects[(kind, ObjectKey.of(stored))] = stored
        return stored

    def get(self, kind: str, namespace: str, name: str) -> Raw:
        return self.objects[(kind, ObjectKey(namespace, name))]

    def touch(self, namespace: str, name: str) -> None:
        """Another writer changes the claim (a label), bumping its resourceVersion."""
        raw = copy.deepcopy(self.get("claims", namespace, name))
        raw["metadata"].setdefault("labels", {})["touched"] = "yes"
        self.put("claims", raw)

    def _write_claim(self, body: Mapping[str, Any], *, status: bool) -> Raw:
        key = ObjectKey.of(body)
        self.calls.append(f"{'status' if status else 'update'} {key}")
        if self.before_write is not None:
            self.before_write("status" if status else "update", body)
        current = self.objects.get(("claims", key))
        if current is None:
            raise errors.APINotFoundError(404, "NotFound", f"claim {key} not found")
        if current["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]:
            raise errors.APIConflictError(409, "Conflict", "the object has been modified")
        new = copy.deepcopy(dict(body))
        if status:
            new["metadata"] = copy.deepcopy(current["metadata"])
            new["spec"] = copy.deepcopy(current["spec"])
        else:
            new["status"] = copy.deepcopy(current.get("status", {}))
        return self.put("claims", new)

    # -- SchedulerWriter ------------------------------------------------------------------------

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return copy.deepcopy(self._write_claim(body, status=False))

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return copy.deepcopy(self._write_claim(body, status=True))

    async def get_claim(self, key: ObjectKey) -> Mapping[str, Any] | None:
        found = self.objects.get(("claims", key))
        return copy.deepcopy(found) if found is not None else None

    async def bind(self, body: Mapping[str, Any]) -> None:
        key = ObjectKey.of(body)
        self.calls.append(f"bind {key} {body['target']['name']}")
        if self.fail_bind is not None:
            raise self.fail_bind
        pod = copy.deepcopy(self.get("pods", key.namespace, key.name))
        if pod["metadata"]["uid"] != body["metadata"]["uid"]:
            raise errors.APIConflictError(409, "Conflict", "uid mismatch")
        if pod["spec"].get("nodeName"):
            raise errors.APIConflictError(409, "Conflict", "pod is already assigned")
        pod["spec"]["nodeName"] = body["target"]["name"]
        self.put("pods", pod)

    async def create_claim(self, claim: ResourceClaim) -> Mapping[str, Any]:
        """POST with generateName: the server picks the name and the UID."""
        body = create_body(claim, "v1")
        serial = next(_uids)
        body["metadata"]["name"] = f"{body['metadata']['generateName']}x{serial}"
        body["metadata"]["uid"] = f"created-{serial}"
        self.calls.append(f"create {ObjectKey.of(body)}")
        return copy.deepcopy(self.put("claims", body))

    async def delete_claim(self, key: ObjectKey, uid: str) -> None:
        self.calls.append(f"delete {key}")
        current = self.objects.get(("claims", key))
        if current is not None and current["metadata"]["uid"] == uid:
            self.delete("claims", key.namespace, key.name)

    def delete(self, kind: str, namespace: str, name: str) -> None:
        del self.objects[(kind, ObjectKey(namespace, name))]

    async def patch_pod_status(self, pod: ObjectKey, patch: Mapping[str, Any]) -> None:
        self.calls.append(f"pod status {pod}")
        raw = copy.deepcopy(self.get("pods", pod.namespace, pod.name))
        raw.setdefault("status", {}).update(patch["status"])
        self.put("pods", raw)

    async def emit(self, event: Event) -> None:
        self.events.append(event)


def deliver(world: World, scheduler: Scheduler, kinds: Iterable[str] | None = None) -> None:
    """Play the world's objects to the stores as watch events; deletions included."""
    state = scheduler.state
    targets: dict[str, tuple[Store[Any], Callable[[Any], None]]] = {
        "nodes": (state.nodes, scheduler.node_changed),
        "classes": (state.classes, scheduler.class_changed),
        "slices": (state.slices, scheduler.slice_changed),
        "claims": (state.claims, _claims_handler(scheduler)),
        "pods": (state.pods, scheduler.pod_changed),
    }
    for kind in kinds or targets:
        store, handler = targets[kind]
        present = {key for (k, key) in world.objects if k == kind}
        for entry in list(store):
            if entry.key not in present:
                change = store.apply("DELETED", entry.raw)
                if change is not None:
                    handler(change)
        for (k, _), raw in sorted(world.objects.items(), key=lambda item: str(item[0][1])):
            if k == kind:
                change = store.apply("MODIFIED", copy.deepcopy(raw))
                if change is not None:
                    handler(change)


def _claims_handler(scheduler: Scheduler) -> Callable[[Any], None]:
    def handle(change: Any) -> None:
        scheduler.state.ledger.observe(change)
        scheduler.claim_changed(change)

    return handle
