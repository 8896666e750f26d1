"""Raw objects and stores for the eviction controller tests (parsed as the operator parses)."""

from __future__ import annotations

import datetime
from typing import Any

from dra_operator import model
from dra_operator.cluster import CLAIM_INDEXERS, POD_INDEXERS, SLICE_INDEXERS, Store

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
DRIVER = "gpu.example.com"
POOL = "node-1"


def stamp(at: datetime.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def taint(effect: str = "NoExecute", key: str = "bad", at: datetime.datetime = T0) -> Any:
    return {"key": key, "value": "yes", "effect": effect, "timeAdded": stamp(at)}


def toleration(effect: str = "NoExecute", seconds: int | None = None, key: str = "bad") -> Any:
    t: dict[str, Any] = {"key": key, "operator": "Exists", "effect": effect}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


def slice_(devices: dict[str, list[Any]], generation: int = 1, name: str = "s1") -> Any:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(generation)},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": POOL, "generation": generation, "resourceSliceCount": 1},
            "nodeName": "node-1",
            "devices": [
                {"name": d, **({"taints": taints} if taints else {})}
                for d, taints in devices.items()
            ],
        },
    }


def claim(
    name: str = "c1",
    devices: tuple[str, ...] = ("dev-0",),
    tolerations: list[Any] | None = None,
    reserved_for: tuple[tuple[str, str], ...] = (("p1", "uid-p1"),),
    namespace: str = "default",
    allocated: bool = True,
) -> Any:
    status: dict[str, Any] = {}
    if allocated:
        results = [
            {
                "request": "req",
                "driver": DRIVER,
                "pool": POOL,
                "device": d,
                **({"tolerations": tolerations} if tolerations else {}),
            }
            for d in devices
        ]
        status["allocation"] = {"devices": {"results": results}}
    if reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in reserved_for]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "req", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": status,
    }


def pod(
    name: str = "p1",
    claims: tuple[str, ...] = ("c1",),
    node: str = "node-1",
    namespace: str = "default",
    uid: str | None = None,
) -> Any:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "x"}],
            "resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims],
        },
    }


def rule(
    name: str = "r1",
    effect: str = "NoExecute",
    selector: dict[str, str] | None = None,
    generation: int = 1,
    conditions: list[Any] | None = None,
    at: datetime.datetime = T0,
) -> Any:
    spec: dict[str, Any] = {"taint": taint(effect, at=at)}
    if selector is not None:
        spec["deviceSelector"] = selector
    raw: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "uid": f"uid-{name}", "generation": generation},
        "spec": spec,
    }
    if conditions:
        raw["status"] = {"conditions": conditions}
    return raw


class Stores:
    def __init__(self) -> None:
        self._version = 0
        self.pods: Store[model.Pod] = Store("Pod", model.parse_pod, POD_INDEXERS)
        self.claims: Store[model.ResourceClaim] = Store(
            "ResourceClaim", model.parse_resource_claim, CLAIM_INDEXERS
        )
        self.slices: Store[model.ResourceSlice] = Store(
            "ResourceSlice", model.parse_resource_slice, SLICE_INDEXERS
        )
        self.rules: Store[model.DeviceTaintRule] = Store(
            "DeviceTaintRule", lambda raw: model.parse_device_taint_rule(raw, "v1beta2")
        )

    def add(self, *objs: Any) -> None:
        stores: dict[str, Store[Any]] = {
            "Pod": self.pods,
            "ResourceClaim": self.claims,
            "ResourceSlice": self.slices,
            "DeviceTaintRule": self.rules,
        }
        for raw in objs:
            self._version += 1  # every add is a new version, as the server would write it
            raw["metadata"]["resourceVersion"] = str(self._version)
            stores[raw["kind"]].apply("MODIFIED", raw)
