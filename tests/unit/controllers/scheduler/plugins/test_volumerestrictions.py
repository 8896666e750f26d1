"""VolumeRestrictions: upstream's disk-conflict tables (GCE PD, AWS EBS, RBD, iSCSI) and
TestAccessModeConflicts, by name; read-only sharing; preemption's AddPod/RemovePod.
"""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    PodInfo,
    Status,
)
from dra_operator.controllers.scheduler.plugins import volumerestrictions
from dra_operator.model import Pod

from .storage_builders import StorageHandle, node, node_info, pod, pvc

DISK_CONFLICT = Status(Code.UNSCHEDULABLE, ("node(s) had no available disk",))
RWOP_CONFLICT = Status(
    Code.UNSCHEDULABLE,
    (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod",
    ),
)


def _check(
    p: Pod, existing: list[Pod], prefilter: Code, want: Status, handle: StorageHandle | None = None
) -> None:
    info = node_info(node("node-1"), existing)
    handle = handle or StorageHandle(nodes=[info])
    plugin = volumerestrictions.new({}, handle)
    state = CycleState()
    _, status = plugin.pre_filter(state, p, [info])
    assert status.code is prefilter, status
    if status.ok:
        assert plugin.filter(state, p, info) == want


def _disk_cases(source: str, state: dict[str, Any], other: dict[str, Any]) -> list[Any]:
    one = {"name": "v", source: state}
    two = {"name": "v", source: other}
    none: dict[str, Any] = {"name": "volume with no restriction", "emptyDir": {}}
    return [
        pytest.param([], [], Code.SKIP, Status(), id="nothing"),
        pytest.param([], [one], Code.SKIP, Status(), id="one state"),
        pytest.param([one], [one], Code.SUCCESS, DISK_CONFLICT, id="same state"),
        pytest.param([two], [one], Code.SUCCESS, Status(), id="different state"),
        pytest.param(
            [none], [], Code.SKIP, Status(), id="pod with a volume that doesn't have restrictions"
        ),
    ]


def _run_disk_case(
    volumes: list[dict[str, Any]], existing: list[dict[str, Any]], prefilter: Code, want: Status
) -> None:
    others = [pod("existing", volumes=existing)] if existing else []
    _check(pod(volumes=volumes), others, prefilter, want)


@pytest.mark.parametrize(
    ("volumes", "existing", "prefilter", "want"),
    _disk_cases("gcePersistentDisk", {"pdName": "foo"}, {"pdName": "bar"}),
)
def test_gce_disk_conflicts(
    volumes: list[dict[str, Any]], existing: list[dict[str, Any]], prefilter: Code, want: Status
) -> None:
    _run_disk_case(volumes, existing, prefilter, want)


@pytest.mark.parametrize(
    ("volumes", "existing", "prefilter", "want"),
    _disk_cases("awsElasticBlockStore", {"volumeID": "foo"}, {"volumeID": "bar"}),
)
def test_aws_disk_conflicts(
    volumes: list[dict[str, Any]], existing: list[dict[str, Any]], prefilter: Code, want: Status
) -> None:
    _run_disk_case(volumes, existing, prefilter, want)


@pytest.mark.parametrize(
    ("volumes", "existing", "prefilter", "want"),
    _disk_cases(
        "rbd",
        {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"},
        {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"},
    ),
)
def test_rbd_disk_conflicts(
    volumes: list[dict[str, Any]], existing: list[dict[str, Any]], prefilter: Code, want: Status
) -> None:
    _run_disk_case(volumes, existing, prefilter, want)


@pytest.mark.parametrize(
    ("volumes", "existing", "prefilter", "want"),
    _disk_cases(
        "iscsi",
        {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0},
        {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "lun": 0},
    ),
)
def test_iscsi_disk_conflicts(
    volumes: list[dict[str, Any]], existing: list[dict[str, Any]], prefilter: Code, want: Status
) -> None:
    _run_disk_case(volumes, existing, prefilter, want)


def test_read_only_gce_disks_can_be_shared() -> None:
    ro = {"name": "v", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
    _check(pod(volumes=[ro]), [pod("existing", volumes=[ro])], Code.SUCCESS, Status())


RWOP_1 = pvc("claim-with-rwop-1", access_modes=["ReadWriteOncePod"])
RWOP_2 = pvc("claim-with-rwop-2", access_modes=["ReadWriteOncePod"])
RWX = pvc("claim-with-rwx", access_modes=["ReadWriteMany"])
WITH_ONE = pod("pod-with-one-pvc", claims=["claim-with-rwop-1"])
WITH_TWO = pod("pod-with-two-pvcs", claims=["claim-with-rwop-1", "claim-with-rwop-2"])
ONE_CONFLICT = pod("pod-with-one-conflict", claims=["claim-with-rwop-1"])
TWO_CONFLICTS = pod("pod-with-two-conflicts", claims=["claim-with-rwop-1", "claim-with-rwop-2"])
WITH_RWX = pod("pod-with-rwx", claims=["claim-with-rwx"])


@pytest.mark.parametrize(
    ("p", "existing", "pvcs", "prefilter", "want"),
    [
        pytest.param(pod(), [], [], Code.SKIP, Status(), id="nothing"),
        pytest.param(
            WITH_ONE,
            [],
            [],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            Status(),
            id="failed to get PVC",
        ),
        pytest.param(
            WITH_ONE, [WITH_RWX], [RWOP_1, RWX], Code.SKIP, Status(), id="no access mode conflict"
        ),
        pytest.param(
            ONE_CONFLICT,
            [WITH_ONE, WITH_RWX],
            [RWOP_1, RWX],
            Code.SUCCESS,
            RWOP_CONFLICT,
            id="access mode conflict, unschedulable",
        ),
        pytest.param(
            TWO_CONFLICTS,
            [WITH_TWO, WITH_RWX],
            [RWOP_1, RWOP_2, RWX],
            Code.SUCCESS,
            RWOP_CONFLICT,
            id="two conflicts, unschedulable",
        ),
    ],
)
def test_access_mode_conflicts(
    p: Pod, existing: list[Pod], pvcs: list[Any], prefilter: Code, want: Status
) -> None:
    info = node_info(node("node-1"), existing)
    _check(p, existing, prefilter, want, StorageHandle(nodes=[info], pvcs=pvcs))


def test_removing_the_pod_that_holds_the_claim_lifts_the_conflict() -> None:
    info = node_info(node("node-1"), [WITH_ONE])
    plugin = volumerestrictions.new({}, StorageHandle(nodes=[info], pvcs=[RWOP_1]))
    state = CycleState()
    plugin.pre_filter(state, ONE_CONFLICT, [info])
    simulation = state.clone()
    victim = PodInfo(pod=WITH_ONE, requests={}, non_zero_requests={})
    extensions = plugin.pre_filter_extensions()
    assert extensions.remove_pod(simulation, ONE_CONFLICT, victim, info).ok
    assert plugin.filter(simulation, ONE_CONFLICT, info).ok
    assert plugin.filter(state, ONE_CONFLICT, info) == RWOP_CONFLICT
    assert extensions.add_pod(simulation, ONE_CONFLICT, victim, info).ok
    assert plugin.filter(simulation, ONE_CONFLICT, info) == RWOP_CONFLICT
