"""Explain decides as the scheduler would: DeviceTaintRules taint devices, policies govern."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from tests.unit.hooks.scenario import DRIVER, FEATURES, gpu_claim

from dra_operator.allocator import Features
from dra_operator.cli._diagnose import Diagnosis, Policies, diagnose_claim
from dra_operator.cli._explain import _policy_line
from dra_operator.hooks import parse_allocation_policy
from dra_operator.model import DeviceTaintRule, parse_device_taint_rule
from dra_operator.verify import ClusterState

from .test_diagnose import _state


def rule(name: str, effect: str = "NoSchedule", **selector: str) -> DeviceTaintRule:
    raw = {
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": DRIVER, **selector},
            "taint": {"key": f"example.com/{name}", "value": "yes", "effect": effect},
        },
    }
    return parse_device_taint_rule(raw, "v1beta2")


def _with_rules(*rules: DeviceTaintRule) -> ClusterState:
    return replace(_state(gpu_claim()), rules=rules)


def _node1(found: Diagnosis | None) -> list[str]:
    assert found is not None
    node1 = found.nodes[0]
    assert node1.node == "node-1"
    return ["fits"] if node1.fits else [r.blocking for r in node1.requests]


@pytest.mark.parametrize(
    ("rules", "features", "expected"),
    [
        pytest.param((rule("a", device="gpu-0"),), FEATURES, ["fits"], id="one-device-left"),
        pytest.param(
            (rule("all"),),
            FEATURES,
            ["taints: 2 with untolerated taint example.com/all=yes:NoSchedule"],
            id="every-device-tainted",
        ),
        pytest.param((rule("all", "None"),), FEATURES, ["fits"], id="effect-none"),
        pytest.param(
            (rule("all"),), replace(FEATURES, device_taints=False), ["fits"], id="taints-off"
        ),
    ],
)
def test_device_taint_rules_taint_the_devices_they_select(
    rules: tuple[DeviceTaintRule, ...], features: Features, expected: list[str]
) -> None:
    found = diagnose_claim(_with_rules(*rules), "default", "claim", features)
    assert _node1(found) == expected


def _policy(name: str, **spec: Any) -> Any:
    return parse_allocation_policy({"metadata": {"name": name, "generation": 1}, "spec": spec})


@pytest.mark.parametrize(
    ("policies", "labels", "expected"),
    [
        pytest.param((), {}, ("", "FirstFit", ()), id="none"),
        pytest.param(
            (_policy("pack", strategy="BinPack", deviceClassNames=["gpu"]),),
            {},
            ("pack", "BinPack", ()),
            id="by-class",
        ),
        pytest.param(
            (
                _policy("pack", strategy="BinPack"),
                _policy(
                    "ml",
                    strategy="Spread",
                    namespaceSelector={"matchLabels": {"team": "ml"}},
                    hooks=["prefer"],
                ),
            ),
            {"default": {"team": "ml"}},
            ("ml", "Spread", ("prefer",)),
            id="most-specific-with-hooks",
        ),
        pytest.param(
            (_policy("ml", strategy="Spread", namespaceSelector={"matchLabels": {"team": "ml"}}),),
            {"default": {"team": "web"}},
            ("", "FirstFit", ()),
            id="namespace-not-selected",
        ),
    ],
)
def test_the_governing_policy_is_used_and_named(
    policies: tuple[Any, ...], labels: dict[str, dict[str, str]], expected: tuple[Any, ...]
) -> None:
    found = diagnose_claim(
        _state(gpu_claim()),
        "default",
        "claim",
        FEATURES,
        Policies(policies=policies, namespace_labels=labels),
    )
    assert found is not None
    assert (found.policy, found.strategy, found.hooks_not_run) == expected
    assert _node1(found) == ["fits"]


def test_a_policy_search_budget_bounds_the_attempt() -> None:
    tight = _policy("tight", strategy="FirstFit", searchBudget={"steps": 1})
    found = diagnose_claim(
        _state(gpu_claim(2)), "default", "claim", FEATURES, Policies(policies=(tight,))
    )
    assert found is not None and found.policy == "tight"
    assert not found.nodes[0].fits
    assert "search budget exhausted" in found.nodes[0].summary


@pytest.mark.parametrize(
    ("found", "line"),
    [
        pytest.param(Diagnosis(subject="claim x"), [], id="nothing-tried"),
        pytest.param(
            Diagnosis(subject="claim x", strategy="FirstFit"),
            ["  policy: no AllocationPolicy governs (strategy FirstFit)"],
            id="no-policy",
        ),
        pytest.param(
            Diagnosis(subject="claim x", policy="ml", strategy="Spread", hooks_not_run=("a",)),
            [
                "  policy: AllocationPolicy ml (strategy Spread);"
                " its hooks are not run by explain: a"
            ],
            id="policy-with-hooks",
        ),
    ],
)
def test_the_table_names_the_policy(found: Diagnosis, line: list[str]) -> None:
    assert _policy_line(found) == line
