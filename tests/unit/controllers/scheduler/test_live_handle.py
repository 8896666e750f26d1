"""The live scheduler's Handle: plugins read the caches' objects and find the writers they need."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_operator import kube, model
from dra_operator.cluster import Store
from dra_operator.controllers.scheduler import LiveHandle
from dra_operator.controllers.scheduler.framework import build_snapshot
from dra_operator.controllers.scheduler.plugins.defaultbinder import BinderHandle
from dra_operator.controllers.scheduler.plugins.noderesources.fit import ExtendedResourceHandle
from dra_operator.controllers.scheduler.plugins.volumebinding import WritesVolumes


def _store(kind: str, parse: Any, *raws: Mapping[str, Any]) -> Store[Any]:
    store: Store[Any] = Store(kind, parse)
    for raw in raws:
        store.apply("ADDED", raw)
    return store


def _meta(name: str, namespace: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{name}",
        "resourceVersion": "1",
        **extra,
    }


def _handle(namespaces: Store[Mapping[str, str]] | None) -> LiveHandle:
    pv = {"metadata": _meta("pv-b"), "spec": {"storageClassName": "fast"}}
    other = {"metadata": _meta("pv-a"), "spec": {"storageClassName": "fast"}}
    slow = {"metadata": _meta("pv-c"), "spec": {"storageClassName": "slow"}}
    gpu = {"metadata": _meta("gpu"), "spec": {"extendedResourceName": "example.com/gpu"}}
    return LiveHandle(
        pvcs=_store(
            "PersistentVolumeClaim",
            model.parse_persistent_volume_claim,
            {"metadata": _meta("data", "ns"), "spec": {"storageClassName": "fast"}},
        ),
        pvs=_store("PersistentVolume", model.parse_persistent_volume, pv, other, slow),
        storage_classes=_store(
            "StorageClass",
            model.parse_storage_class,
            {"metadata": _meta("fast"), "provisioner": "csi.example.com"},
        ),
        csi_nodes=_store(
            "CSINode", model.parse_csi_node, {"metadata": _meta("node-1"), "spec": {"drivers": []}}
        ),
        csi_drivers=_store(
            "CSIDriver", model.parse_csi_driver, {"metadata": _meta("csi.example.com"), "spec": {}}
        ),
        classes=_store("DeviceClass", model.parse_device_class, gpu),
        namespaces=namespaces,
        client=kube.Client(kube.ClusterConfig(server="https://127.0.0.1:1")),  # never called
    )


def test_reads_each_kind_from_its_cache() -> None:
    handle = _handle(None)
    claim = handle.pvc("ns", "data")
    assert claim is not None and claim.metadata.name == "data"
    assert handle.pvc("other", "data") is None
    assert [pv.name for pv in handle.pvs("fast")] == ["pv-a", "pv-b"]
    assert handle.pv("pv-c") is not None and handle.pv("missing") is None
    assert handle.storage_class("fast") is not None and handle.storage_class("slow") is None
    assert handle.csi_node("node-1") is not None and handle.csi_node("node-2") is None
    assert handle.csi_driver("csi.example.com") is not None
    assert handle.extended_resource_classes.by_name.get("example.com/gpu") == "gpu"


def test_namespace_labels_come_from_the_namespace_cache_when_there_is_one() -> None:
    assert _handle(None).namespace_labels("ns") is None
    raw = {"metadata": {**_meta("ns"), "labels": {"team": "a"}}}
    store = _store("Namespace", lambda obj: obj["metadata"].get("labels", {}), raw)
    handle = _handle(store)
    assert handle.namespace_labels("ns") == {"team": "a"}
    assert handle.namespace_labels("absent") is None


def test_serves_the_writers_plugins_look_for() -> None:
    handle = _handle(None)
    assert isinstance(handle, BinderHandle)
    assert isinstance(handle, WritesVolumes)
    assert isinstance(handle, ExtendedResourceHandle)


def test_the_framework_swaps_its_snapshot() -> None:
    handle = _handle(None)
    node = model.parse_node(
        {"metadata": _meta("node-1"), "status": {"allocatable": {"pods": "10"}}}
    )
    snapshot = build_snapshot([node], [])
    handle.set_snapshot(snapshot)
    assert handle.snapshot is snapshot
