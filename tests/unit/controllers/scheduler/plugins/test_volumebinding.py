"""VolumeBinding: upstream's TestVolumeBinding table, binder cases, Reserve and PreBind.

Covers PreFilter's verdicts on missing, lost and immediate claims; Filter on bound claims' PV
node affinity, on waiting claims matched to the smallest fitting PV (class, access modes,
selector, node affinity, a PV pre-bound to the claim) or provisioned where the StorageClass
allows; Score with StorageCapacityScoring's default and a custom shape; Reserve assuming a PV
so the next pod cannot take it, Unreserve forgetting it; PreBind's writes through the writer
and its wait until the claim is bound, or its error when the PV's claimRef is reset.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest

from dra_operator import errors, model
from dra_operator.controllers.scheduler.framework import Code, CycleState, Status
from dra_operator.controllers.scheduler.plugins import PluginArgsError, volumebinding
from dra_operator.controllers.scheduler.plugins.volumebinding import VolumeBinding, _scorer

from .storage_builders import (
    DEFAULT_CLASSES,
    HOSTNAME,
    IMMEDIATE,
    WAIT,
    WAIT_HDD,
    StorageHandle,
    node,
    node_info,
    pod,
    pv,
    pvc,
    storage_class,
)

BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

UPSTREAM_NOT_PORTED = {
    "local volumes with close capacity are preferred (StorageCapacityScoring disabled)": (
        "StorageCapacityScoring is on in 1.37 and cannot be switched off here"
    ),
    "zonal volumes with close capacity are preferred (StorageCapacityScoring disabled)": (
        "StorageCapacityScoring is on in 1.37 and cannot be switched off here"
    ),
    "storage capacity score": "needs CSIStorageCapacity objects, not watched here",
    "storage capacity score with static binds": "needs CSIStorageCapacity, not watched here",
    "dynamic provisioning with multiple PVCs of the same StorageClass": (
        "needs CSIStorageCapacity objects, not watched here"
    ),
    "prefer node with least allocatable": "needs CSIStorageCapacity objects, not watched here",
    "prefer node with maximum allocatable": "needs CSIStorageCapacity objects, not watched here",
    "Test_PreBindPreFlight/*": "PreBindPreFlight is not an extension point of this framework",
}


@dataclass
class Run:
    prefilter: Status
    filters: list[Status]
    scores: list[int]


def run(
    p: model.Pod,
    nodes: Sequence[model.Node],
    *,
    pvcs: Sequence[model.PersistentVolumeClaim] = (),
    pvs: Sequence[model.PersistentVolume] = (),
    classes: Sequence[model.StorageClass] = DEFAULT_CLASSES,
    args: dict[str, object] | None = None,
) -> Run:
    """PreFilter, then Filter and Score on every node when PreFilter let the pod through."""
    infos = [node_info(n) for n in nodes]
    handle = StorageHandle(nodes=infos, pvcs=pvcs, pvs=pvs, classes=classes)
    plugin = volumebinding.new(args or {}, handle)
    state = CycleState()
    _, status = plugin.pre_filter(state, p, infos)
    if not (status.ok or status.code is Code.SKIP):
        return Run(status, [], [])
    filters = [plugin.filter(state, p, info) for info in infos]
    assert plugin.pre_score(state, p, infos).ok
    scores = [plugin.score(state, p, info)[0] for info in infos]
    return Run(status, filters, scores)


def ok(run: Run, n: int = 1) -> None:
    assert [f.code for f in run.filters] == [Code.SUCCESS] * n


@pytest.mark.parametrize(
    ("claims", "pvcs", "message"),
    [
        pytest.param(
            ["pvc-a"], [], 'persistentvolumeclaim "pvc-a" not found', id="PVC does not exist"
        ),
        pytest.param(
            ["pvc-a", "pvc-b"],
            [pvc("pvc-a", bound_to="pv-a")],
            'persistentvolumeclaim "pvc-b" not found',
            id="Part of PVCs do not exist",
        ),
        pytest.param(
            ["pvc-a"],
            [pvc("pvc-a", IMMEDIATE)],
            "pod has unbound immediate PersistentVolumeClaims",
            id="immediate claims not bound",
        ),
        pytest.param(
            ["pvc-a"],
            [pvc("pvc-a", bound_to="pv-a", phase="Lost")],
            'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
            id="pv not found claim lost",
        ),
    ],
)
def test_prefilter_rejects(
    claims: list[str], pvcs: list[model.PersistentVolumeClaim], message: str
) -> None:
    result = run(pod(claims=claims), [node("node-a")], pvcs=pvcs)
    assert result.prefilter.code is UNRESOLVABLE
    assert result.prefilter.reasons == (message,)


def _local(name: str, on: str, capacity: str, sc: str = WAIT) -> model.PersistentVolume:
    return pv(name, sc, capacity=capacity, node_affinity={HOSTNAME: [on]})


LOCAL_PVS = [
    _local("pv-a-0", "node-a", "200Gi"),
    _local("pv-a-1", "node-a", "200Gi"),
    _local("pv-b-0", "node-b", "100Gi"),
    _local("pv-b-1", "node-b", "100Gi"),
]
NODES = [node("node-a"), node("node-b"), node("node-c")]


HDD_PVS = [
    _local("pv-a-2", "node-a", "200Gi", WAIT_HDD),
    _local("pv-a-3", "node-a", "200Gi", WAIT_HDD),
    _local("pv-b-2", "node-b", "100Gi", WAIT_HDD),
    _local("pv-b-3", "node-b", "100Gi", WAIT_HDD),
]


@pytest.mark.parametrize(
    ("p", "nodes", "pvcs", "pvs", "prefilter", "reasons", "scores"),
    [
        pytest.param(pod(), [node("node-a")], [], [], Code.SKIP, [()], [0], id="pod has not pvcs"),
        pytest.param(
            pod(claims=["pvc-a"]),
            [node("node-a")],
            [pvc("pvc-a", bound_to="pv-a")],
            [pv("pv-a")],
            Code.SUCCESS,
            [()],
            [0],
            id="all bound",
        ),
        pytest.param(
            pod(claims=["pvc-a"]),
            [node("node-a")],
            [pvc("pvc-a")],
            [],
            Code.SUCCESS,
            [(BIND_CONFLICT,)],
            [0],
            id="unbound claims no matches",
        ),
        pytest.param(
            pod(claims=["pvc-a", "pvc-b"]),
            [node("node-a", {"foo": "barbar"})],
            [pvc("pvc-a", bound_to="pv-a"), pvc("pvc-b")],
            [pv("pv-a", node_affinity={"foo": ["bar"]})],
            Code.SUCCESS,
            [(NODE_CONFLICT, BIND_CONFLICT)],
            [0],
            id="bound and unbound unsatisfied",
        ),
        pytest.param(
            pod(claims=["pvc-a"]),
            [node("node-a")],
            [pvc("pvc-a", bound_to="pv-a")],
            [],
            Code.SUCCESS,
            [(PV_NOT_EXIST,)],
            [0],
            id="pv not found",
        ),
        pytest.param(
            pod(claims=["pvc-a"]),
            NODES,
            [pvc("pvc-a", storage="50Gi")],
            LOCAL_PVS,
            Code.SUCCESS,
            [(), (), (BIND_CONFLICT,)],
            [75, 50, 0],
            id="local volumes with close capacity are preferred",
        ),
        pytest.param(
            pod(claims=["pvc-0", "pvc-1"]),
            NODES,
            [pvc("pvc-0", storage="50Gi"), pvc("pvc-1", WAIT_HDD, storage="100Gi")],
            LOCAL_PVS + HDD_PVS,
            Code.SUCCESS,
            [(), (), (BIND_CONFLICT,)],
            [63, 25, 0],
            id="local volumes with close capacity are preferred (multiple pvcs)",
        ),
    ],
)
def test_volume_binding(
    p: model.Pod,
    nodes: list[model.Node],
    pvcs: list[model.PersistentVolumeClaim],
    pvs: list[model.PersistentVolume],
    prefilter: Code,
    reasons: list[tuple[str, ...]],
    scores: list[int],
) -> None:
    """Scores as with StorageCapacityScoring on (1.37's default); a rejected node scores 0."""
    result = run(p, nodes, pvcs=pvcs, pvs=pvs)
    assert result.prefilter.code is prefilter
    assert [f.reasons for f in result.filters] == reasons
    assert [s if f.ok else 0 for s, f in zip(result.scores, result.filters, strict=True)] == scores


REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
ZONAL_NODES = [
    node(f"zone-{z}-node-{n}", {REGION: f"region-{z}", ZONE: f"zone-{z}"})
    for z in "abc"
    for n in "ab"
]
ZONAL_PVS = [
    pv(
        f"pv-{z}-{i}",
        capacity=size,
        node_affinity={REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]},
    )
    for z, size in (("a", "200Gi"), ("b", "100Gi"))
    for i in (0, 1)
]


@pytest.mark.parametrize(
    ("args", "scores"),
    [
        pytest.param(
            {}, [75, 75, 50, 50, 0, 0], id="zonal volumes with close capacity are preferred"
        ),
        pytest.param(
            {
                "shape": [
                    {"utilization": 0, "score": 0},
                    {"utilization": 50, "score": 3},
                    {"utilization": 100, "score": 5},
                ]
            },
            [15, 15, 30, 30, 0, 0],
            id="zonal volumes with close capacity are preferred (custom shape)",
        ),
    ],
)
def test_zonal_volumes(args: dict[str, object], scores: list[int]) -> None:
    result = run(
        pod(claims=["pvc-a"]),
        ZONAL_NODES,
        pvcs=[pvc("pvc-a", storage="50Gi")],
        pvs=ZONAL_PVS,
        args=args,
    )
    assert [f.reasons for f in result.filters] == [()] * 4 + [(BIND_CONFLICT,)] * 2
    assert result.scores == scores


# -- binder cases (binder_test.go, TestFindPodVolumesWithoutProvisioning / WithProvisioning) --


@pytest.mark.parametrize(
    ("pvcs", "pvs", "reasons"),
    [
        pytest.param(
            [pvc("pvc-a", storage="1Gi")],
            [pv("pv-a", capacity="1Gi", node_affinity={HOSTNAME: ["node1"]})],
            (),
            id="unbound-pvc,pv-same-node",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi")],
            [pv("pv-a", capacity="1Gi", node_affinity={HOSTNAME: ["node2"]})],
            (BIND_CONFLICT,),
            id="unbound-pvc,pv-different-node",
        ),
        pytest.param(
            [pvc("pvc-a", storage="5Gi")],
            [pv("pv-a", capacity="1Gi")],
            (BIND_CONFLICT,),
            id="unbound-pvc,pv-too-small",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi", access_modes=["ReadWriteMany"])],
            [pv("pv-a", capacity="1Gi", access_modes=["ReadWriteOnce"])],
            (BIND_CONFLICT,),
            id="unbound-pvc,pv-access-modes-differ",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi", selector={"matchLabels": {"tier": "fast"}})],
            [pv("pv-a", capacity="1Gi", labels={"tier": "slow"})],
            (BIND_CONFLICT,),
            id="unbound-pvc,pv-selector-mismatch",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi")],
            [pv("pv-a", capacity="1Gi", phase="Bound", claim=("other", "uid-other"))],
            (BIND_CONFLICT,),
            id="unbound-pvc,pv-bound-to-another",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi")],
            [pv("pv-a", capacity="1Gi", phase="Bound", claim=("pvc-a", ""))],
            (),
            id="prebound-pvc",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi", bound_to="pv-a")],
            [pv("pv-a", capacity="1Gi", node_affinity={HOSTNAME: ["node1"]})],
            (),
            id="bound-pvc,pv-same-node",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi", bound_to="pv-a")],
            [pv("pv-a", capacity="1Gi", node_affinity={HOSTNAME: ["node2"]})],
            (NODE_CONFLICT,),
            id="bound-pvc,pv-different-node",
        ),
        pytest.param(
            [pvc("pvc-a", storage="1Gi"), pvc("pvc-b", storage="1Gi")],
            [pv("pv-a", capacity="1Gi")],
            (BIND_CONFLICT,),
            id="two-unbound-pvcs,only-one-pv",
        ),
    ],
)
def test_find_pod_volumes_without_provisioning(
    pvcs: list[model.PersistentVolumeClaim],
    pvs: list[model.PersistentVolume],
    reasons: tuple[str, ...],
) -> None:
    claims = [c.metadata.name for c in pvcs]
    result = run(pod(claims=claims), [node("node1")], pvcs=pvcs, pvs=pvs)
    assert result.prefilter.ok
    assert result.filters[0].reasons == reasons


PROVISIONED = storage_class("provisioned", provisioner="example.com/csi")
ZONED = storage_class("zoned", provisioner="example.com/csi", topologies=[{"zone": ["a"]}])


@pytest.mark.parametrize(
    ("claim", "node_labels", "reasons"),
    [
        pytest.param(pvc("pvc-a", "provisioned"), {}, (), id="one-provisioned"),
        pytest.param(pvc("pvc-a", WAIT), {}, (BIND_CONFLICT,), id="no-provisioner"),
        pytest.param(pvc("pvc-a", "zoned"), {"zone": "a"}, (), id="allowed-topology"),
        pytest.param(
            pvc("pvc-a", "zoned"), {"zone": "b"}, (BIND_CONFLICT,), id="topology-mismatch"
        ),
        pytest.param(
            pvc("pvc-a", "provisioned", annotations={model.VolumeAnnotation.SELECTED_NODE: "x"}),
            {},
            (BIND_CONFLICT,),
            id="selected-node-elsewhere",
        ),
    ],
)
def test_find_pod_volumes_with_provisioning(
    claim: model.PersistentVolumeClaim, node_labels: dict[str, str], reasons: tuple[str, ...]
) -> None:
    result = run(
        pod(claims=["pvc-a"]),
        [node("node1", node_labels)],
        pvcs=[claim],
        classes=[*DEFAULT_CLASSES, PROVISIONED, ZONED],
    )
    assert result.filters[0].reasons == reasons


def test_the_smallest_fitting_pv_is_chosen() -> None:
    handle = StorageHandle(
        nodes=[node_info(node("node1"))],
        pvcs=[pvc("pvc-a", storage="1Gi")],
        pvs=[pv("big", capacity="10Gi"), pv("small", capacity="2Gi"), pv("tiny", capacity="1Mi")],
    )
    plugin = volumebinding.new({}, handle)
    state = CycleState()
    p = pod(claims=["pvc-a"])
    plugin.pre_filter(state, p, handle.snapshot.node_infos)
    assert plugin.filter(state, p, handle.snapshot.node_infos[0]).ok
    assert plugin.reserve(state, p, "node1").ok
    assumed = plugin.cache.pv("small")
    assert assumed is not None and assumed.claim_ref is not None
    assert assumed.claim_ref.name == "pvc-a" and assumed.claim_ref.uid == "uid-pvc-a"


def test_ephemeral_claim_must_be_owned_by_the_pod() -> None:
    p = pod(ephemeral=["scratch"], uid="pod-uid")
    missing = run(p, [node("node1")])
    assert missing.prefilter.reasons == (
        "waiting for ephemeral volume controller to create the persistentvolumeclaim "
        '"pod-a-scratch"',
    )
    foreign = run(p, [node("node1")], pvcs=[pvc("pod-a-scratch", owner_uid="someone")])
    assert foreign.prefilter.reasons == (
        "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)",
    )
    owned = run(p, [node("node1")], pvcs=[pvc("pod-a-scratch", owner_uid="pod-uid")])
    assert owned.prefilter.ok and owned.filters[0].reasons == (BIND_CONFLICT,)


# -- Reserve, Unreserve, PreBind ---------------------------------------------------------------


class Writer:
    """The writer seam: applies each write to the handle's listers, as the watch would."""

    def __init__(self, handle: StorageHandle, *, fail: bool = False) -> None:
        self.handle = handle
        self.fail = fail
        self.calls: list[str] = []

    async def bind_volume(self, volume: model.PersistentVolume) -> model.PersistentVolume:
        self.calls.append(f"bind_volume {volume.name}")
        if self.fail:
            raise errors.APIConflictError(409, "Conflict", "the object has been modified")
        written = replace(volume, metadata=replace(volume.metadata, resource_version="2"))
        self.handle.put(written)
        return written

    async def bind_claim(self, claim: model.PersistentVolumeClaim, pv_name: str) -> None:
        self.calls.append(f"bind_claim {claim.metadata.name} {pv_name}")
        self.handle.put(pvc(claim.metadata.name, bound_to=pv_name, uid=claim.metadata.uid))

    async def select_node(
        self, claim: model.PersistentVolumeClaim, node_name: str
    ) -> model.PersistentVolumeClaim:
        self.calls.append(f"select_node {claim.metadata.name} {node_name}")
        selected = {model.VolumeAnnotation.SELECTED_NODE: node_name}
        written = pvc(claim.metadata.name, claim.storage_class, annotations=selected)
        self.handle.put(written)
        return written


class WriterHandle(StorageHandle):
    volume_writer: Writer


def _placed(handle: StorageHandle, p: model.Pod) -> tuple[VolumeBinding, CycleState]:
    plugin = volumebinding.new({"bindTimeoutSeconds": 5}, handle)
    state = CycleState()
    plugin.pre_filter(state, p, handle.snapshot.node_infos)
    assert plugin.filter(state, p, handle.snapshot.node_infos[0]).ok
    assert plugin.reserve(state, p, "node1").ok
    return plugin, state


def _handle(pvs: Sequence[model.PersistentVolume]) -> WriterHandle:
    handle = WriterHandle(
        nodes=[node_info(node("node1"))], pvcs=[pvc("pvc-a"), pvc("pvc-b")], pvs=pvs
    )
    handle.volume_writer = Writer(handle)
    return handle


def test_reserve_keeps_the_next_pod_from_taking_the_same_pv() -> None:
    handle = _handle([pv("pv-1", node_affinity={HOSTNAME: ["node1"]})])
    plugin, _ = _placed(handle, pod("first", claims=["pvc-a"]))
    state = CycleState()
    second = pod("second", claims=["pvc-b"])
    plugin.pre_filter(state, second, handle.snapshot.node_infos)
    assert plugin.filter(state, second, handle.snapshot.node_infos[0]).reasons == (BIND_CONFLICT,)


def test_unreserve_gives_the_pv_back() -> None:
    handle = _handle([pv("pv-1")])
    first = pod("first", claims=["pvc-a"])
    plugin, state = _placed(handle, first)
    plugin.unreserve(state, first, "node1")
    assumed = plugin.cache.pv("pv-1")
    assert assumed is not None and assumed.claim_ref is None


async def test_prebind_writes_the_binding_and_waits_until_the_claim_is_bound() -> None:
    handle = _handle([pv("pv-1", node_affinity={HOSTNAME: ["node1"]})])
    p = pod(claims=["pvc-a"])
    plugin, state = _placed(handle, p)
    status = await plugin.pre_bind(state, p, "node1")
    assert status.ok, status
    assert handle.volume_writer.calls == ["bind_volume pv-1", "bind_claim pvc-a pv-1"]
    written = handle.pv("pv-1")
    assert written is not None and written.claim_ref is not None
    assert written.claim_ref.uid == "uid-pvc-a"
    assert written.metadata.annotations[model.VolumeAnnotation.BOUND_BY_CONTROLLER] == "yes"


async def test_prebind_reports_a_refused_write_and_restores_the_assumed_pv() -> None:
    handle = _handle([pv("pv-1")])
    handle.volume_writer.fail = True
    p = pod(claims=["pvc-a"])
    plugin, state = _placed(handle, p)
    status = await plugin.pre_bind(state, p, "node1")
    assert status.code is Code.ERROR
    restored = plugin.cache.pv("pv-1")
    assert restored is not None and restored.claim_ref is None


async def test_prebind_fails_when_the_claim_ref_is_reset() -> None:
    class Resetting(Writer):
        async def bind_claim(self, claim: model.PersistentVolumeClaim, pv_name: str) -> None:
            self.handle.put(pv("pv-1", resource_version="3"))  # someone cleared the claimRef

    handle = _handle([pv("pv-1")])
    handle.volume_writer = Resetting(handle)
    p = pod(claims=["pvc-a"])
    plugin, state = _placed(handle, p)
    status = await plugin.pre_bind(state, p, "node1")
    assert status == Status(Code.ERROR, ('ClaimRef got reset for pv "pv-1"',))


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_prebind_selects_the_node_for_dynamic_provisioning_then_waits() -> None:
    handle = WriterHandle(
        nodes=[node_info(node("node1"))],
        pvcs=[pvc("pvc-a", "provisioned")],
        classes=[*DEFAULT_CLASSES, PROVISIONED],
    )
    handle.volume_writer = Writer(handle)
    p = pod(claims=["pvc-a"])
    plugin, state = _placed(handle, p)
    assumed = plugin.cache.pvc("default", "pvc-a")
    assert assumed is not None
    assert assumed.metadata.annotations[model.VolumeAnnotation.SELECTED_NODE] == "node1"
    waiting = asyncio.create_task(plugin.pre_bind(state, p, "node1"))
    await asyncio.sleep(0)
    assert handle.volume_writer.calls == ["select_node pvc-a node1"]
    assert not waiting.done()
    handle.put(pv("pvc-a-volume", "provisioned", phase="Bound", claim=("pvc-a", "uid-pvc-a")))
    handle.put(
        pvc(
            "pvc-a",
            "provisioned",
            bound_to="pvc-a-volume",
            annotations={model.VolumeAnnotation.SELECTED_NODE: "node1"},
            resource_version="5",
        )
    )
    assert (await waiting).ok


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_prebind_times_out_while_the_provisioner_does_not_answer() -> None:
    handle = WriterHandle(
        nodes=[node_info(node("node1"))],
        pvcs=[pvc("pvc-a", "provisioned")],
        classes=[*DEFAULT_CLASSES, PROVISIONED],
    )
    handle.volume_writer = Writer(handle)
    p = pod(claims=["pvc-a"])
    plugin, state = _placed(handle, p)
    status = await plugin.pre_bind(state, p, "node1")
    assert status == Status(Code.ERROR, ("binding volumes: context deadline exceeded",))


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"bindTimeoutSeconds": -1}, id="negative timeout"),
        pytest.param({"shape": []}, id="empty shape"),
        pytest.param(
            {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
            id="unsorted shape",
        ),
        pytest.param({"shape": [{"utilization": 0, "score": 11}]}, id="score above 10"),
        pytest.param({"bindTimeout": 5}, id="unknown field"),
    ],
)
def test_args_the_plugin_refuses(args: dict[str, object]) -> None:
    with pytest.raises(PluginArgsError):
        volumebinding.new(args, StorageHandle())


def _classes(*pairs: tuple[int, int]) -> dict[str, _scorer.StorageResource]:
    return {f"class-{i}": _scorer.StorageResource(r, c) for i, (r, c) in enumerate(pairs)}


CUSTOM = (_scorer.ShapePoint(50, 0), _scorer.ShapePoint(80, 30), _scorer.ShapePoint(100, 50))


@pytest.mark.parametrize(
    ("shape", "cases"),
    [
        pytest.param(
            _scorer.DEFAULT_SHAPE,
            [([(0, 100)], 100), ([(30, 100)], 70), ([(50, 100)], 50), ([(100, 100)], 0)],
            id="default shape, single class",
        ),
        pytest.param(
            _scorer.DEFAULT_SHAPE,
            [
                ([(0, 100), (0, 100)], 100),
                ([(0, 100), (30, 100)], 85),
                ([(30, 100), (30, 100)], 70),
                ([(30, 100), (60, 100)], 55),
                ([(50, 100), (50, 100)], 50),
                ([(50, 100), (100, 100)], 25),
                ([(100, 100), (100, 100)], 0),
            ],
            id="default shape, multiple classes",
        ),
        pytest.param(
            CUSTOM,
            [
                ([(0, 100), (0, 100)], 0),
                ([(0, 100), (30, 100)], 0),
                ([(30, 100), (30, 100)], 0),
                ([(30, 100), (60, 100)], 5),
                ([(50, 100), (100, 100)], 25),
                ([(90, 100), (90, 100)], 40),
                ([(100, 100), (100, 100)], 50),
            ],
            id="custom shape, multiple classes",
        ),
    ],
)
def test_score(
    shape: tuple[_scorer.ShapePoint, ...], cases: list[tuple[list[tuple[int, int]], int]]
) -> None:
    """scorer_test.go's TestScore: the shape over each class's utilization, averaged."""
    for pairs, want in cases:
        assert _scorer.score(shape, _classes(*pairs)) == want, pairs


def test_only_a_pod_without_volume_claims_signs() -> None:
    plugin = volumebinding.new({}, StorageHandle())
    assert plugin.sign_pod(pod("a")) == plugin.sign_pod(pod("b")) == ()
    assert plugin.sign_pod(pod(claims=["pvc-a"])) is None
    assert plugin.sign_pod(pod(ephemeral=["scratch"])) is None
