"""Preparing claims: the CDI spec a container gets, the checkpoint across a restart, and the
refusal of a device already prepared for another claim (counted by reason)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.unit.driver.builders import DRIVER, NODE, Claims, allocated_claim, inventory

from dra_operator.driver import (
    Checkpoint,
    DriverMetrics,
    PrepareError,
    Preparer,
    RefusalReason,
)
from dra_operator.errors import InvalidObjectError


def _preparer(tmp_path: Path, claims: Claims) -> Preparer:
    state = tmp_path / "state"
    return Preparer(inventory(), Checkpoint.load(state), tmp_path / "cdi", claims, DriverMetrics())


async def test_prepare_writes_a_cdi_spec_naming_each_device(tmp_path: Path) -> None:
    config = [
        {
            "source": "FromClaim",
            "requests": ["req"],
            "opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}},
        },
        {"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": {"class": 1}}},
        {"source": "FromClaim", "opaque": {"driver": "other.io", "parameters": {"no": 1}}},
        {
            "source": "FromClaim",
            "requests": ["other"],
            "opaque": {"driver": DRIVER, "parameters": {"no": 2}},
        },
    ]
    results = [{"device": "gpu-0"}, {"device": "nic-0", "shareID": "s-1", "request": "req/fast"}]
    claim = allocated_claim("c1", results, config)
    preparer = _preparer(tmp_path, Claims(claim))

    prepared = await preparer.prepare("ns", "c1", "uid-c1")

    assert [(d.pool, d.device, d.requests, d.share_id) for d in prepared.devices] == [
        (NODE, "gpu-0", ("req",), None),
        (NODE, "nic-0", ("req",), "s-1"),  # the kubelet matches containers' top-level names
    ]
    assert [d.cdi_ids for d in prepared.devices] == [
        (f"{DRIVER}/device=uid-c1-0-gpu-0",),
        (f"{DRIVER}/device=uid-c1-1-nic-0",),
    ]
    spec_file = tmp_path / "cdi" / f"{DRIVER}_uid-c1.json"
    assert prepared.cdi_spec == str(spec_file)
    spec = json.loads(spec_file.read_text())
    assert spec["kind"] == f"{DRIVER}/device"
    assert spec["containerEdits"] == {"env": [f"DRA_DEVICES={NODE}/gpu-0,{NODE}/nic-0"]}
    envs = {d["name"]: d["containerEdits"]["env"] for d in spec["devices"]}
    parameters = '[{"class":1},{"mode":"fast"}]'  # class config first: the claim's wins
    assert envs["uid-c1-0-gpu-0"] == [
        f"DRA_DEVICE_GPU_0={NODE}/gpu-0",
        "DRA_DEVICE_GPU_0_CLAIM=ns/c1",
        "DRA_DEVICE_GPU_0_REQUESTS=req",
        f"DRA_DEVICE_GPU_0_CONFIG={parameters}",
    ]
    assert envs["uid-c1-1-nic-0"][2:] == [  # a subrequest: the parent's config applies
        "DRA_DEVICE_NIC_0_REQUESTS=req/fast",
        f"DRA_DEVICE_NIC_0_CONFIG={parameters}",
        "DRA_DEVICE_NIC_0_SHARE_ID=s-1",
    ]


async def test_second_claim_for_a_prepared_device_is_refused_and_counted(
    tmp_path: Path,
) -> None:
    claims = Claims(
        allocated_claim("first", [{"device": "gpu-0"}]),
        allocated_claim("second", [{"device": "gpu-0"}]),
        allocated_claim("nic-a", [{"device": "nic-0", "shareID": "a"}]),
        allocated_claim("nic-b", [{"device": "nic-0", "shareID": "b"}]),
    )
    preparer = _preparer(tmp_path, claims)
    await preparer.prepare("ns", "first", "uid-first")

    with pytest.raises(PrepareError, match=r"gpu-0 is already prepared for claim ns/first") as err:
        await preparer.prepare("ns", "second", "uid-second")
    assert err.value.reason == RefusalReason.DEVICE_IN_USE
    assert preparer.metrics.refusals("device_in_use") == 1
    assert not (tmp_path / "cdi" / f"{DRIVER}_uid-second.json").exists()

    # A multi-allocatable device may be prepared for several claims.
    await preparer.prepare("ns", "nic-a", "uid-nic-a")
    await preparer.prepare("ns", "nic-b", "uid-nic-b")
    # Once the first claim is unprepared, the device is free again.
    preparer.unprepare("uid-first", "ns", "first")
    assert not (tmp_path / "cdi" / f"{DRIVER}_uid-first.json").exists()
    await preparer.prepare("ns", "second", "uid-second")
    assert preparer.metrics.refusals("device_in_use") == 1


async def test_admin_access_shares_a_device_with_its_user(tmp_path: Path) -> None:
    claims = Claims(
        allocated_claim("user", [{"device": "gpu-0"}]),
        allocated_claim("monitor", [{"device": "gpu-0", "adminAccess": True}]),
        allocated_claim("second-monitor", [{"device": "gpu-1", "adminAccess": True}]),
        allocated_claim("second-user", [{"device": "gpu-1"}]),
    )
    preparer = _preparer(tmp_path, claims)
    await preparer.prepare("ns", "user", "uid-user")
    monitor = await preparer.prepare("ns", "monitor", "uid-monitor")
    assert [d.admin_access for d in monitor.devices] == [True]
    # Held only with admin access (and the checkpoint remembers it): a user may still have it.
    restarted = _preparer(tmp_path, claims)
    await restarted.prepare("ns", "second-monitor", "uid-second-monitor")
    await _preparer(tmp_path, claims).prepare("ns", "second-user", "uid-second-user")
    assert preparer.metrics.refusals("device_in_use") == 0


async def test_restart_keeps_prepared_claims_and_their_refusals(tmp_path: Path) -> None:
    claims = Claims(
        allocated_claim("c1", [{"device": "gpu-1"}]), allocated_claim("c2", [{"device": "gpu-1"}])
    )
    before = await _preparer(tmp_path, claims).prepare("ns", "c1", "uid-c1")

    restarted = _preparer(tmp_path, claims)  # a new process: state read from the checkpoint
    reads = claims.reads
    assert await restarted.prepare("ns", "c1", "uid-c1") == before  # no second preparation
    assert claims.reads == reads
    with pytest.raises(PrepareError, match="already prepared for claim ns/c1"):
        await restarted.prepare("ns", "c2", "uid-c2")

    restarted.unprepare("uid-c1", "ns", "c1")
    assert not Path(before.cdi_spec).exists()
    assert list(_preparer(tmp_path, claims).checkpoint) == []
    restarted.unprepare("uid-c1", "ns", "c1")  # unpreparing twice is fine


@pytest.mark.parametrize(
    ("claim", "uid", "reason", "message"),
    [
        pytest.param(
            None, "uid-gone", RefusalReason.CLAIM_NOT_FOUND, "ns/gone: not found", id="gone"
        ),
        pytest.param(
            allocated_claim("gone", [{"device": "gpu-0"}]),
            "uid-recreated",
            RefusalReason.UID_MISMATCH,
            "has UID uid-gone, the kubelet asked for uid-recreated",
            id="uid",
        ),
        pytest.param(
            allocated_claim("gone", [], allocated=False),
            "uid-gone",
            RefusalReason.NOT_ALLOCATED,
            "not allocated",
            id="unallocated",
        ),
        pytest.param(
            allocated_claim("gone", [{"device": "gpu-0", "pool": "node-b"}]),
            "uid-gone",
            RefusalReason.FOREIGN_POOL,
            "node-b/gpu-0 is not in pool node-a",
            id="pool",
        ),
        pytest.param(
            allocated_claim("gone", [{"device": "tpu-9"}]),
            "uid-gone",
            RefusalReason.UNKNOWN_DEVICE,
            "tpu-9 is not published",
            id="device",
        ),
    ],
)
async def test_unpreparable_claims_are_refused_with_a_reason(
    tmp_path: Path, claim: dict[str, Any] | None, uid: str, reason: RefusalReason, message: str
) -> None:
    preparer = _preparer(tmp_path, Claims(*([claim] if claim else [])))
    with pytest.raises(PrepareError, match=message) as err:
        await preparer.prepare("ns", "gone", uid)
    assert err.value.reason == reason
    assert preparer.metrics.refusals(reason) == 1
    assert list(preparer.checkpoint) == []


async def test_a_spec_that_cannot_be_written_is_a_refusal(tmp_path: Path) -> None:
    (tmp_path / "cdi").write_text("not a directory")
    preparer = _preparer(tmp_path, Claims(allocated_claim("c1", [{"device": "gpu-0"}])))
    with pytest.raises(PrepareError, match=r"claim ns/c1: writing state: .*cdi") as err:
        await preparer.prepare("ns", "c1", "uid-c1")
    assert err.value.reason == RefusalReason.WRITE_FAILED
    assert list(preparer.checkpoint) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{", "unreadable", id="json"),
        pytest.param('{"version": 9}', "version: is 9, want 1", id="version"),
        pytest.param(
            '{"version": 1, "claims": [{"uid": "u"}]}', r"claims\[0\]: malformed", id="entry"
        ),
    ],
)
def test_a_damaged_checkpoint_is_an_error_naming_it(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "checkpoint.json").write_text(text)
    with pytest.raises(InvalidObjectError, match=message) as err:
        Checkpoint.load(tmp_path)
    assert str(tmp_path / "checkpoint.json") in str(err.value)
