"""AllocationPolicy → governing policy: most specific match wins, ties by name, none → FirstFit."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from dra_operator.allocator import BinPack, FirstFit, Spread, TopologyAffinity
from dra_operator.errors import InvalidObjectError
from dra_operator.hooks import (
    allocator_policy,
    governed_counts,
    governing_policy,
    parse_allocation_policy,
    policy_status,
)
from dra_operator.model import (
    DeviceClaim,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    FrozenMap,
    ObjectMeta,
    ResourceClaim,
)

NOW = datetime.datetime(2026, 11, 22, 3, 0, tzinfo=datetime.UTC)


def _policy(name: str, generation: int = 1, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "generation": generation}, "spec": spec}


def _claim(*classes: str, labels: dict[str, str] | None = None, sub: str = "") -> ResourceClaim:
    requests = [
        DeviceRequest(name=f"r{i}", exactly=ExactDeviceRequest(device_class_name=c))
        for i, c in enumerate(classes)
    ]
    if sub:
        requests.append(
            DeviceRequest(
                name="p", first_available=(DeviceSubRequest(name="s", device_class_name=sub),)
            )
        )
    return ResourceClaim(
        metadata=ObjectMeta(name="c", namespace="ns", labels=FrozenMap(labels or {})),
        spec=DeviceClaim(requests=tuple(requests)),
    )


GPU_ONLY = _policy("gpu-only", strategy="BinPack", deviceClassNames=["gpu"])
ML_NS = _policy("ml-ns", strategy="Spread", namespaceSelector={"matchLabels": {"team": "ml"}})
GPU_ML = _policy(
    "gpu-ml",
    strategy="TopologyAffinity",
    topologyAttribute="numa",
    deviceClassNames=["gpu"],
    namespaceSelector={"matchLabels": {"team": "ml"}},
)
TRAINING = _policy(
    "training",
    strategy="Spread",
    claimSelector={"matchExpressions": [{"key": "tier", "operator": "In", "values": ["train"]}]},
)
CATCH_ALL_B = _policy("b-all", strategy="BinPack")
CATCH_ALL_A = _policy("a-all", strategy="Spread")
UNKNOWN_HOOK = _policy("with-hook", strategy="BinPack", deviceClassNames=["gpu"], hooks=["nope"])
ALL = [GPU_ONLY, ML_NS, GPU_ML, TRAINING, CATCH_ALL_B, CATCH_ALL_A, UNKNOWN_HOOK]


@pytest.mark.parametrize(
    ("raw", "claim", "ns_labels", "winner"),
    [
        pytest.param([], _claim("gpu"), {}, None, id="no-policies"),
        pytest.param([GPU_ONLY], _claim("nic"), {}, None, id="class-mismatch"),
        pytest.param([GPU_ONLY], _claim("nic", sub="gpu"), {}, "gpu-only", id="class-in-sub"),
        pytest.param(ALL, _claim("gpu"), {"team": "ml"}, "gpu-ml", id="two-fields-win"),
        pytest.param(ALL, _claim("gpu"), {}, "gpu-only", id="class-beats-catch-all"),
        pytest.param(ALL, _claim("nic"), {"team": "ml"}, "ml-ns", id="namespace"),
        pytest.param(
            [ML_NS, TRAINING],
            _claim("nic", labels={"tier": "train"}),
            {"team": "ml"},
            "ml-ns",
            id="tie-by-name",
        ),
        pytest.param(ALL, _claim("nic"), {}, "a-all", id="catch-alls-by-name"),
        pytest.param([UNKNOWN_HOOK], _claim("gpu"), {}, None, id="invalid-governs-nothing"),
        pytest.param(
            [
                _policy(
                    "not-dev",
                    claimSelector={
                        "matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]
                    },
                )
            ],
            _claim("gpu", labels={"env": "dev"}),
            {},
            None,
            id="does-not-exist",
        ),
    ],
)
def test_the_most_specific_policy_governs(
    raw: list[dict[str, Any]], claim: ResourceClaim, ns_labels: dict[str, str], winner: str | None
) -> None:
    policies = [parse_allocation_policy(p) for p in raw]
    got = governing_policy(policies, claim, ns_labels)
    assert (got.name if got else None) == winner


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(None, FirstFit(), id="none-first-fit"),
        pytest.param(GPU_ONLY, BinPack(), id="binpack"),
        pytest.param(ML_NS, Spread(), id="spread"),
        pytest.param(GPU_ML, TopologyAffinity(attribute="numa"), id="topology"),
        pytest.param(_policy("default"), FirstFit(), id="strategy-defaults"),
    ],
)
def test_allocator_policy(raw: dict[str, Any] | None, expected: object) -> None:
    assert allocator_policy(parse_allocation_policy(raw) if raw else None) == expected


def test_parse_reads_weights_budget_and_hooks() -> None:
    policy = parse_allocation_policy(
        _policy(
            "p",
            generation=4,
            nodeScoring={"strategyWeight": 2, "hookWeight": 0},
            searchBudget={"steps": 1000, "timeout": "1m30.5s"},
            hooks=["most-memory"],
        )
    )
    assert (policy.generation, policy.strategy_weight, policy.hook_weight) == (4, 2, 0)
    assert (policy.search_steps, policy.search_timeout, policy.hooks) == (
        1000,
        90.5,
        ("most-memory",),
    )
    assert policy.specificity == 0


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        pytest.param({"searchBudget": {"timeout": "soon"}}, "spec.searchBudget.timeout", id="dur"),
        pytest.param(
            {"claimSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}},
            "spec.claimSelector.matchExpressions[0].operator",
            id="operator",
        ),
        pytest.param(
            {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
            "spec.namespaceSelector.matchExpressions[0].values",
            id="in-without-values",
        ),
    ],
)
def test_parse_names_the_bad_field(spec: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        parse_allocation_policy(_policy("bad", **spec))
    assert info.value.path == path


def test_governed_counts_give_each_claim_to_one_policy() -> None:
    policies = [parse_allocation_policy(p) for p in ALL]
    claims = [_claim("gpu"), _claim("gpu"), _claim("nic")]
    counts = governed_counts(policies, claims, {"ns": {"team": "ml"}})
    assert counts == {
        "gpu-only": 0,
        "ml-ns": 1,
        "gpu-ml": 2,
        "training": 0,
        "b-all": 0,
        "a-all": 0,
        "with-hook": 0,
    }


def _conditions(status: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}


def test_status_accepted_then_invalid_keeps_unchanged_transition_times() -> None:
    policy = parse_allocation_policy(_policy("p", generation=3, hooks=["nope"]))
    invalid = policy_status(policy, governed=5, known_hooks=frozenset(), now=NOW)
    assert invalid["observedGeneration"] == 3 and invalid["governedClaims"] == 0
    assert _conditions(invalid) == {
        "Accepted": ("False", "Invalid", "unknown hooks: nope (not loaded by the operator)"),
        "Invalid": ("True", "Invalid", "unknown hooks: nope (not loaded by the operator)"),
    }
    later = NOW + datetime.timedelta(minutes=5)
    accepted = policy_status(
        policy,
        governed=5,
        known_hooks=frozenset({"nope"}),
        now=later,
        previous=invalid["conditions"],
    )
    assert accepted["governedClaims"] == 5
    assert _conditions(accepted) == {
        "Accepted": ("True", "Accepted", ""),
        "Invalid": ("False", "Accepted", ""),
    }
    assert {c["lastTransitionTime"] for c in accepted["conditions"]} == {"2026-11-22T03:05:00Z"}
    again = policy_status(
        policy,
        governed=6,
        known_hooks=frozenset({"nope"}),
        now=later + later.resolution,
        previous=accepted["conditions"],
    )
    assert again["conditions"] == accepted["conditions"]
