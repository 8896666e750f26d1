"""NodeVolumeLimits: upstream's TestCSILimits cases (those without VolumeAttachments or in-tree
migration), by name; a volume already on the node is not counted twice; VolumeLimitScaling's
`preventPodSchedulingIfMissing`; PreFilter's Skip for pods without claims.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dra_operator import model
from dra_operator.controllers.scheduler.framework import Code, CycleState, Status
from dra_operator.controllers.scheduler.plugins import nodevolumelimits

from .storage_builders import (
    DEFAULT_CLASSES,
    StorageHandle,
    csi_driver,
    csi_node,
    node,
    node_info,
    pod,
    pv,
    pvc,
    storage_class,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = Status(Code.UNSCHEDULABLE, ("node(s) exceed max volume count",))
OK = Status()

UPSTREAM_NOT_PORTED = {
    "TestCSILimitsAfterCSINodeUpdatedQHint/*": (
        "queueing hints (requeue on cluster events): the plugins here have none"
    ),
    "gate disabled - skip driver presence check (regardless of CSIDriver presence)": (
        "VolumeLimitScaling is on in 1.37 and cannot be switched off here"
    ),
}


def _bound(driver: str, i: int) -> tuple[model.PersistentVolumeClaim, model.PersistentVolume]:
    name = f"csi-{driver}-{i}"
    return pvc(name, bound_to=f"pv-{name}"), pv(f"pv-{name}", csi=(driver, f"handle-{name}"))


CLAIMS, VOLUMES = zip(*[_bound(d, i) for d in (EBS, GCE) for i in range(4)], strict=True)
PENDING = pvc("csi-4", "ebs-sc")  # unbound: counted by its class's provisioner
NO_CLASS = pvc("csi-5", "missing-sc")
CLASSES = [*DEFAULT_CLASSES, storage_class("ebs-sc", provisioner=EBS)]

RUNNING = pod("running", claims=[f"csi-{EBS}-3"])
EBS_ONE = pod("ebs-one", claims=[f"csi-{EBS}-0"])
EBS_TWO = pod("ebs-two", claims=[f"csi-{EBS}-1", f"csi-{EBS}-2"])
GCE_TWO = pod("gce-two", claims=[f"csi-{GCE}-1", f"csi-{GCE}-2"])
PENDING_POD = pod("pending", claims=["csi-4"])
NO_CLASS_POD = pod("no-class", claims=["csi-5"])


def _filter(
    new: model.Pod,
    existing: Sequence[model.Pod],
    limits: dict[str, int | None] | None,
    *,
    drivers: Sequence[model.CSIDriver] = (),
    extra: Sequence[model.PersistentVolumeClaim] = (),
) -> Status:
    info = node_info(node("node-1"), existing)
    handle = StorageHandle(
        nodes=[info],
        pvcs=[*CLAIMS, PENDING, NO_CLASS, *extra],
        pvs=VOLUMES,
        classes=CLASSES,
        csi_nodes=[csi_node("node-1", limits)] if limits is not None else [],
        csi_drivers=drivers,
    )
    plugin = nodevolumelimits.new({}, handle)
    state = CycleState()
    _, status = plugin.pre_filter(state, new, [info])
    assert status.ok
    return plugin.filter(state, new, info)


@pytest.mark.parametrize(
    ("new", "existing", "limits", "want"),
    [
        pytest.param(
            EBS_ONE,
            [RUNNING, EBS_TWO],
            {EBS: 4},
            OK,
            id="fits when node volume limit >= new pods CSI volume",
        ),
        pytest.param(
            EBS_ONE,
            [RUNNING, EBS_TWO],
            {EBS: 2},
            EXCEEDED,
            id="doesn't when node volume limit <= pods CSI volume",
        ),
        pytest.param(
            EBS_ONE,
            [RUNNING, EBS_TWO],
            {EBS: None},
            OK,
            id="should when driver does not support volume limits",
        ),
        pytest.param(
            EBS_ONE,
            [PENDING_POD, EBS_TWO],
            {EBS: 3},
            EXCEEDED,
            id="count pending PVCs towards volume limit <= pods CSI volume",
        ),
        pytest.param(
            EBS_ONE,
            [NO_CLASS_POD, EBS_TWO],
            {EBS: 3},
            OK,
            id="don't count pvcs with missing SC towards volume limit",
        ),
        pytest.param(
            EBS_ONE,
            [GCE_TWO, EBS_TWO],
            {EBS: 2},
            EXCEEDED,
            id="count pvcs with the same type towards volume limit",
        ),
        pytest.param(
            EBS_ONE,
            [GCE_TWO],
            {EBS: 2, GCE: 2},
            OK,
            id="don't count pvcs with different type towards volume limit",
        ),
        pytest.param(EBS_ONE, [RUNNING, EBS_TWO], None, OK, id="nil csi node"),
    ],
)
def test_csi_limits(
    new: model.Pod,
    existing: list[model.Pod],
    limits: dict[str, int | None] | None,
    want: Status,
) -> None:
    assert _filter(new, existing, limits) == want


def test_a_volume_already_on_the_node_is_not_counted_again() -> None:
    again = pod("again", claims=[f"csi-{EBS}-1"])
    assert _filter(again, [EBS_TWO], {EBS: 2}) == OK


EPHEMERAL = pod("abc", ephemeral=["xyz"], uid="12345")


def test_ephemeral_volume_missing() -> None:
    assert _filter(EPHEMERAL, [], {EBS: 4}) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ('looking up PVC default/abc-xyz: persistentvolumeclaim "abc-xyz" not found',),
    )


def test_ephemeral_volume_not_owned() -> None:
    foreign = pvc("abc-xyz", "ebs-sc", owner_uid="someone-else")
    status = _filter(EPHEMERAL, [], {EBS: 4}, extra=[foreign])
    assert status == Status(
        Code.ERROR,
        ("PVC default/abc-xyz was not created for pod default/abc (pod is not owner)",),
    )


def test_ephemeral_doesnt_when_node_volume_limit_le_pods_csi_volume() -> None:
    owned = pvc("abc-xyz", "ebs-sc", owner_uid="12345")
    assert _filter(EPHEMERAL, [EBS_TWO], {EBS: 2}, extra=[owned]) == EXCEEDED


@pytest.mark.parametrize(
    ("drivers", "limits", "want"),
    [
        pytest.param(
            [csi_driver(EBS, prevent_if_missing=True)],
            {GCE: 4},
            Status(Code.UNSCHEDULABLE, (f"{EBS} CSI driver is not installed on the node",)),
            id="gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing "
            "is true",
        ),
        pytest.param(
            [csi_driver(EBS)],
            {GCE: 4},
            OK,
            id="gate enabled - allow scheduling when CSIDriver exists but "
            "PreventPodSchedulingIfMissing is not set",
        ),
        pytest.param(
            [], {GCE: 4}, OK, id="gate enabled - allow scheduling when CSIDriver object missing"
        ),
        pytest.param(
            [csi_driver(EBS, prevent_if_missing=True)],
            {EBS: 4},
            OK,
            id="gate enabled - driver installed within limit",
        ),
    ],
)
def test_volume_limit_scaling_gate(
    drivers: list[model.CSIDriver], limits: dict[str, int | None], want: Status
) -> None:
    """VolumeLimitScaling is on in 1.37: a driver that opted in must be on the node."""
    assert _filter(EBS_ONE, [], limits, drivers=drivers) == want


@pytest.mark.parametrize(
    ("p", "code"),
    [
        pytest.param(
            pod(volumes=[{"name": "s", "secret": {"secretName": "s"}}]),
            Code.SKIP,
            id="skip Filter when the pod only uses secrets and configmaps",
        ),
        pytest.param(EBS_ONE, Code.SUCCESS, id="don't skip Filter when the pod has pvcs"),
        pytest.param(
            EPHEMERAL, Code.SUCCESS, id="don't skip Filter when the pod has ephemeral volumes"
        ),
    ],
)
def test_prefilter(p: model.Pod, code: Code) -> None:
    plugin = nodevolumelimits.new({}, StorageHandle())
    _, status = plugin.pre_filter(CycleState(), p, [])
    assert status.code is code
