"""VolumeZone: upstream's TestSingleZone, TestMultiZone and TestWithBinding, by name.

Filter runs after PreFilter whatever it said, as upstream's tests do: without PreFilter's
state it computes the PVs' zones itself. Not-found texts are those of the real listers
(`storageclass.storage.k8s.io "x" not found`), not of upstream's fake ones.
"""

from __future__ import annotations

import pytest

from dra_operator import model
from dra_operator.controllers.scheduler.framework import Code, CycleState, Status
from dra_operator.controllers.scheduler.plugins import volumezone

from .storage_builders import StorageHandle, node_info, pod, pv, pvc, storage_class

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had no available volume zone",))
OK = Status()


def _node(labels: dict[str, str]) -> model.Node:
    return model.parse_node({"metadata": {"name": "host1", "labels": labels}})


def _check(
    handle: StorageHandle,
    claim: str | None,
    labels: dict[str, str],
    prefilter: Status,
    want: Status,
) -> None:
    p = pod("pod_1", claims=[claim] if claim else [])
    info = node_info(_node(labels))
    plugin = volumezone.new({}, handle)
    state = CycleState()
    _, status = plugin.pre_filter(state, p, [info])
    assert status == prefilter
    assert plugin.filter(state, p, info) == want


SINGLE = StorageHandle(
    pvs=[
        pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
        pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
        pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
        pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
        pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    ],
    pvcs=[
        pvc("PVC_1", None, bound_to="Vol_1"),
        pvc("PVC_2", None, bound_to="Vol_2"),
        pvc("PVC_Stable_1", None, bound_to="Vol_Stable_1"),
        pvc("PVC_Stable_2", None, bound_to="Vol_Stable_2"),
        pvc("PVC_Stable_3", None, bound_to="Vol_Stable_3"),
    ],
)
USELESS = {"uselessLabel": "none"}


@pytest.mark.parametrize(
    ("claim", "labels", "prefilter", "want"),
    [
        pytest.param(
            None, {BETA_ZONE: "us-west1-a"}, Status(Code.SKIP), OK, id="pod without volume"
        ),
        pytest.param("PVC_1", {}, OK, OK, id="node without labels"),
        pytest.param(
            "PVC_1", {BETA_ZONE: "us-west1-a", **USELESS}, OK, OK, id="beta zone label matched"
        ),
        pytest.param(
            "PVC_2", {BETA_REGION: "us-west1", **USELESS}, OK, OK, id="beta region label matched"
        ),
        pytest.param(
            "PVC_2",
            {BETA_REGION: "no_us-west1", **USELESS},
            OK,
            CONFLICT,
            id="beta region label doesn't match",
        ),
        pytest.param(
            "PVC_1",
            {BETA_ZONE: "no_us-west1-a", **USELESS},
            OK,
            CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_1", {ZONE: "us-west1-a", **USELESS}, OK, OK, id="zone label matched"
        ),
        pytest.param(
            "PVC_Stable_2", {REGION: "us-west1", **USELESS}, OK, OK, id="region label matched"
        ),
        pytest.param(
            "PVC_Stable_2",
            {REGION: "no_us-west1", **USELESS},
            OK,
            CONFLICT,
            id="region label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_1",
            {ZONE: "no_us-west1-a", **USELESS},
            OK,
            CONFLICT,
            id="zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_3",
            {ZONE: "us-west1-a"},
            OK,
            CONFLICT,
            id="pv with zone and region, node with only zone",
        ),
        pytest.param(
            "PVC_Stable_1",
            {BETA_ZONE: "us-west1-a"},
            OK,
            CONFLICT,
            id="pv with zone,node with beta zone",
        ),
        pytest.param(
            "PVC_1",
            {ZONE: "us-west1-a"},
            OK,
            OK,
            id="pv with beta label,node with ga label, matched",
        ),
        pytest.param(
            "PVC_1",
            {ZONE: "us-west1-b"},
            OK,
            CONFLICT,
            id="pv with beta label,node with ga label, don't match",
        ),
    ],
)
def test_single_zone(
    claim: str | None, labels: dict[str, str], prefilter: Status, want: Status
) -> None:
    _check(SINGLE, claim, labels, prefilter, want)


MULTI = StorageHandle(
    pvs=[
        pv("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
        pv("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
    ],
    pvcs=[pvc("PVC_3", None, bound_to="Vol_3"), pvc("PVC_Stable_2", None, bound_to="Vol_Stable_2")],
)


@pytest.mark.parametrize(
    ("claim", "labels", "want"),
    [
        pytest.param("PVC_3", {}, OK, id="node without labels"),
        pytest.param(
            "PVC_3", {BETA_ZONE: "us-west1-a", **USELESS}, OK, id="beta zone label matched"
        ),
        pytest.param(
            "PVC_3",
            {BETA_ZONE: "us-west1-b", **USELESS},
            CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param("PVC_Stable_2", {ZONE: "us-west1-a", **USELESS}, OK, id="zone label matched"),
        pytest.param(
            "PVC_Stable_2", {ZONE: "us-west1-b", **USELESS}, CONFLICT, id="zone label doesn't match"
        ),
    ],
)
def test_multi_zone(claim: str, labels: dict[str, str], want: Status) -> None:
    _check(MULTI, claim, labels, OK, want)


WITH_BINDING = StorageHandle(
    classes=[
        storage_class("Class_Immediate", None),
        storage_class("Class_Wait", "WaitForFirstConsumer"),
    ],
    pvs=[pv("Vol_1", labels={BETA_ZONE: "us-west1-a"})],
    pvcs=[
        pvc("PVC_1", None, bound_to="Vol_1"),
        pvc("PVC_NoSC", "Class_0"),
        pvc("PVC_EmptySC", None),
        pvc("PVC_WaitSC", "Class_Wait"),
        pvc("PVC_ImmediateSC", "Class_Immediate"),
    ],
)


def _unresolvable(text: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (text,))


@pytest.mark.parametrize(
    ("claim", "prefilter", "want"),
    [
        pytest.param("PVC_1", OK, OK, id="label zone failure domain matched"),
        pytest.param(
            "PVC_EmptySC",
            _unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            _unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            id="unbound volume empty storage class",
        ),
        pytest.param(
            "PVC_NoSC",
            _unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
            _unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
            id="unbound volume no storage class",
        ),
        pytest.param(
            "PVC_ImmediateSC",
            _unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
            _unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
            id="unbound volume immediate binding mode",
        ),
        pytest.param("PVC_WaitSC", Status(Code.SKIP), OK, id="unbound volume wait binding mode"),
    ],
)
def test_with_binding(claim: str, prefilter: Status, want: Status) -> None:
    _check(WITH_BINDING, claim, {BETA_ZONE: "us-west1-a", **USELESS}, prefilter, want)
