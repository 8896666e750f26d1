"""Preparing claims: the CDI spec a container gets, the checkpoint across a restart, and the
refusal of a device already prepared for another claim (counted by reason)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.driver import (
    Checkpoint,
    DriverMetrics,
    Inventory,
    PrepareError,
    Preparer,
    RefusalReason,
    parse_inventory,
)
from dra_operator.errors import APINotFoundError, InvalidObjectError

DRIVER = "sim.example.com"
NODE = "node-a"


def _inventory() -> Inventory:
    devices = [
        {"name": "gpu-0"},
        {"name": "gpu-1"},
        {"name": "nic-0", "allowMultipleAllocations": True},
    ]
    return parse_inventory(
        [{"spec": {"driver": DRIVER, "devices": devices}}], node=NODE, driver=DRIVER
    )


def _claim(
    name: str,
    results: list[dict[str, Any]],
    config: list[dict[str, Any]] | None = None,
    *,
    allocated: bool = True,
) -> dict[str, Any]:
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": []}},
        "status": {},
    }
    if allocated:
        claim["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"request": "req", "driver": DRIVER, "pool": NODE, **r} for r in results
                ],
                "config": config or [],
            }
        }
    return claim


class Claims:
    """The claim reader seam: claims by (namespace, name), counting reads."""

    def __init__(self, *claims: dict[str, Any]) -> None:
        self.claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in claims}
        self.reads = 0

    async def __call__(self, namespace: str, name: str) -> dict[str, Any]:
        self.reads += 1
        try:
            return self.claims[namespace, name]
        except KeyError:
            raise APINotFoundError(404, "NotFound", f"{name} not found") from None


def _preparer(tmp_path: Path, claims: Claims) -> Preparer:
    state = tmp_path / "state"
    return Preparer(_inventory(), Checkpoint.load(state), tmp_path / "cdi", claims, DriverMetrics())


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
    claim = _claim("c1", [{"device": "gpu-0"}, {"device": "nic-0", "shareID": "s-1"}], config)
    preparer = _preparer(tmp_path, Claims(claim))

    prepared = await preparer.prepare("ns", "c1", "uid-c1")

    assert [(d.pool, d.device, d.requests, d.share_id) for d in prepared.devices] == [
        (NODE, "gpu-0", ("req",), None),
        (NODE, "nic-0", ("req",), "s-1"),
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
    assert envs["uid-c1-1-nic-0"][-1] == "DRA_DEVICE_NIC_0_SHARE_ID=s-1"


async def test_second_claim_for_a_prepared_device_is_refused_and_counted(
    tmp_path: Path,
) -> None:
    claims = Claims(
        _claim("first", [{"device": "gpu-0"}]),
        _claim("second", [{"device": "gpu-0"}]),
        _claim("nic-a", [{"device": "nic-0", "shareID": "a"}]),
        _claim("nic-b", [{"device": "nic-0", "shareID": "b"}]),
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


async def test_restart_keeps_prepared_claims_and_their_refusals(tmp_path: Path) -> None:
    claims = Claims(_claim("c1", [{"device": "gpu-1"}]), _claim("c2", [{"device": "gpu-1"}]))
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
            _claim("gone", [{"device": "gpu-0"}]),
            "uid-recreated",
            RefusalReason.UID_MISMATCH,
            "has UID uid-gone, the kubelet asked for uid-recreated",
            id="uid",
        ),
        pytest.param(
            _claim("gone", [], allocated=False),
            "uid-gone",
            RefusalReason.NOT_ALLOCATED,
            "not allocated",
            id="unallocated",
        ),
        pytest.param(
            _claim("gone", [{"device": "gpu-0", "pool": "node-b"}]),
            "uid-gone",
            RefusalReason.FOREIGN_POOL,
            "node-b/gpu-0 is not in pool node-a",
            id="pool",
        ),
        pytest.param(
            _claim("gone", [{"device": "tpu-9"}]),
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
