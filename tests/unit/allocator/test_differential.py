"""Differential test against upstream's allocator of each release (the Go oracles:
k8s.io/dynamic-resource-allocation v0.36.5 and v0.37.2).

1,000 generated scenarios (scenario_gen) per release in `make test-full`, the first 250 in `make
test` (ours with `Features.release` set to the oracle's), sent to the oracle as v1 JSON (the model's
renderers) and allocated by us from the same JSON (the model's parsers, our CEL engine through
`CELSelectors`): fatal errors must agree (the same text, up to the CEL engine's own message
and, in the stable tier, the device or pool an order-dependent error names), feasibility must
agree, and under FirstFit the chosen devices, configs and node selectors must be identical
(share IDs masked) wherever upstream is deterministic: its "stable" tier (chosen for feature
sets without consumable capacity and binding conditions) searches pools in Go map order.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from scenario_gen import Scenario, generate, generate_137
from tests.support.counts import scaled
from tests.support.oracle import Oracle

from dra_operator.allocator import Budget, CELSelectors, Ledger, allocate
from dra_operator.errors import AllocationInputError
from dra_operator.model import (
    AllocationResult,
    DeviceAllocationResult,
    parse_allocation_result,
    parse_device_class,
    parse_resource_claim,
    parse_resource_slice,
    render_allocation_result,
    render_claim_status,
    render_device_class,
    render_resource_claim,
    render_resource_slice,
)

# Seeds 0.. of each: a quarter in `make test`, all in `make test-full` (tests/support/counts.py).
SCENARIOS = scaled(250, 1000)
SCENARIOS_137_GATES = scaled(100, 400)  # with the four 1.37 allocator gates drawn (generate_137)
UPSTREAM_TIMEOUT = 2.0  # seconds; upstream's own filter timeout is 10 s
# Our side gets steps, not seconds, so a loaded machine cannot turn a slow answer into a
# disagreement. Both sides search in the same order and we take at most upstream's number of
# steps; what upstream finishes in 2 s (the worst seed so far, 7621, took 129,820) fits.
OUR_BUDGET = Budget(max_steps=250_000, timeout=None)
_KEYS = {
    "admin_access": "adminAccess",
    "prioritized_list": "prioritizedList",
    "partitionable_devices": "partitionableDevices",
    "device_taints": "deviceTaints",
    "device_binding_and_status": "deviceBindingAndStatus",
    "consumable_capacity": "consumableCapacity",
    "list_type_attributes": "listTypeAttributes",
}
_KEYS_137 = {  # only the v0.37.2 oracle knows them
    "compatibility_groups": "compatibilityGroups",
    "derived_attributes": "derivedAttributes",
    "fractional_capacity_range": "fractionalCapacityRange",
    "optional_node_operations": "optionalNodeOperations",
}


def oracle_request(s: Scenario) -> dict[str, Any]:
    """The scenario as the oracle's "allocate" request (v1 JSON throughout)."""
    allocated = []
    for c in s.allocated:
        body = render_resource_claim(c)
        body["status"] = render_claim_status(c.status)
        allocated.append(body)
    keys = {**_KEYS, **_KEYS_137} if s.features.since_137 else _KEYS
    node: dict[str, Any] = {"metadata": {"name": s.node.name, "labels": dict(s.node.labels)}}
    if s.node.declared_features:
        node["status"] = {"declaredFeatures": sorted(s.node.declared_features)}
    return {
        "features": {key: getattr(s.features, field) for field, key in keys.items()},
        "node": node,
        "classes": [render_device_class(c) for c in s.classes],
        "slices": [render_resource_slice(x) for x in s.slices],
        "allocated": allocated,
        "claims": [render_resource_claim(c) for c in s.claims],
    }


def _masked(result: AllocationResult) -> AllocationResult:
    return replace(
        result,
        devices=DeviceAllocationResult(
            results=tuple(
                replace(r, share_id="share" if r.share_id else None) for r in result.devices.results
            ),
            config=result.devices.config,
        ),
    )


# The device or pool a fatal error names, where the stable tier's random pool order decides
# which one is met first ("cannot add device D because ...", "resource pool P is currently").
_MET_FIRST = re.compile(r"(?<=device )\S+(?= because)|(?<=resource pool )\S+(?= is currently)")


def _error_key(text: str, *, stable_tier: bool = False) -> str:
    """Fatal error texts compared up to the CEL engine's own message.

    In upstream's stable tier (pools in Go map order) the device or pool an order-dependent
    error names is masked: which one is met first is random there.
    """
    for marker in ("CEL runtime error", "CEL compile error"):
        if marker in text:
            text = text[: text.index(marker) + len(marker)]
            break
    return _MET_FIRST.sub("<first>", text) if stable_tier else text


def _generate(seed: int, release: int) -> Scenario:
    """`release` 36 or 37: the base scenarios; "gates": with the 1.37 gates (generate_137)."""
    if release == GATES:
        return generate_137(seed)
    scenario = generate(seed)
    return replace(scenario, features=replace(scenario.features, release=release))


GATES = 137  # pseudo-release of `_generate`: 1.37 with its alpha/off-by-default gates drawn


def ours(
    request: dict[str, Any], s: Scenario
) -> tuple[str | None, tuple[AllocationResult, ...] | None]:
    claims = [parse_resource_claim(c) for c in request["claims"]]
    allocated = [parse_resource_claim(c) for c in request["allocated"]]
    try:
        got = allocate(
            claims,
            classes=[parse_device_class(c) for c in request["classes"]],
            slices=[parse_resource_slice(x) for x in request["slices"]],
            node=s.node,
            features=s.features,
            selectors=CELSelectors(s.features),
            ledger=Ledger.from_claims(
                allocated, consumable_capacity=s.features.consumable_capacity
            ),
            budget=OUR_BUDGET,
        )
    except AllocationInputError as err:
        return str(err), None
    return None, got.results


@pytest.mark.parametrize("release", [36, 37], ids=["1.36", "1.37"])
@pytest.mark.parametrize("chunk", range(10))
def test_agrees_with_upstream(
    request: pytest.FixtureRequest, release: int, chunk: int, tmp_path: Path
) -> None:
    oracle: Oracle = request.getfixturevalue("oracle" if release == 36 else "oracle_137")
    per_chunk = SCENARIOS // 10
    _compare(oracle, release, range(chunk * per_chunk, (chunk + 1) * per_chunk), tmp_path)


@pytest.mark.parametrize("chunk", range(4))
def test_agrees_with_upstream_with_the_137_gates(
    request: pytest.FixtureRequest, chunk: int, tmp_path: Path
) -> None:
    """Compatibility groups, derived attributes, optional node operations and the fractional
    capacity range, each drawn on or off, against v0.37.2's experimental allocator."""
    oracle: Oracle = request.getfixturevalue("oracle_137")
    per_chunk = SCENARIOS_137_GATES // 4
    _compare(oracle, GATES, range(chunk * per_chunk, (chunk + 1) * per_chunk), tmp_path)


def _compare(oracle: Oracle, release: int, seeds: range, tmp_path: Path) -> None:
    disagreements = []
    for seed in seeds:
        scenario = _generate(seed, release)
        asked = oracle_request(scenario)
        theirs = oracle.allocate(**asked, timeout_seconds=UPSTREAM_TIMEOUT)
        if (theirs["error"] or "").endswith("timed out trying to allocate devices"):
            continue  # upstream gave up (it backtracks exponentially); we may still answer
        error, results = ours(asked, scenario)
        if theirs["error"] is not None or error is not None:
            stable = scenario.features.is_stable_tier
            key_theirs = _error_key(theirs["error"] or "", stable_tier=stable)
            if key_theirs != _error_key(error or "", stable_tier=stable):
                disagreements.append((seed, "error", theirs["error"], error))
            continue
        if theirs["allocated"] != (results is not None):
            disagreements.append((seed, "feasibility", theirs["allocated"], results is not None))
            continue
        if results is None or scenario.features.is_stable_tier:
            continue  # upstream's stable tier searches pools in random (map) order
        expected = tuple(_masked(parse_allocation_result(r)) for r in theirs["results"])
        mine = tuple(_masked(r) for r in results)
        if expected != mine:
            disagreements.append(
                (
                    seed,
                    "choice",
                    [render_allocation_result(r) for r in expected],
                    [render_allocation_result(r) for r in mine],
                )
            )
    for seed, *_ in disagreements:
        # the oracle request, replayable with `dra-oracle serve < file`
        (tmp_path / f"scenario-{seed}.json").write_text(
            json.dumps({"op": "allocate", **oracle_request(_generate(seed, release))})
        )
    assert not disagreements, (str(tmp_path), disagreements[:3])
