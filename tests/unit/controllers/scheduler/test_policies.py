"""`Governor`: which AllocationPolicy, strategy, weights, budget and hooks steer one decision.

Covers: no policy (the base settings, every hook); the most specific policy governing any of
the decision's claims, ties by name; a policy that is Invalid (unknown hook) governs nothing;
namespace selectors read the namespace store; the budget and weights of the winner; the hooks
it selects (none when it lists none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from dra_operator.allocator import BinPack, FirstFit, Spread
from dra_operator.cluster import Store
from dra_operator.controllers.scheduler import Governor
from dra_operator.hooks import Guard, HookPolicy, HookSet, LoadedHook, parse_allocation_policy
from dra_operator.model import ResourceClaim, parse_resource_claim

from .builders import NS, claim, settings


class Scorer:
    def score_device(self, info: object) -> float:
        return 1.0


HOOKS = HookSet(
    [LoadedHook(name="a", target=Scorer()), LoadedHook(name="b", target=Scorer())], Guard()
)


def _policy(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "dra-operator.dev/v1alpha1",
        "kind": "AllocationPolicy",
        "metadata": {"name": name, "generation": 1, "resourceVersion": "1"},
        "spec": spec,
    }


def _governor(*policies: dict[str, Any], labels: Mapping[str, str] | None = None) -> Governor:
    store = Store("AllocationPolicy", parse_allocation_policy)
    for raw in policies:
        store.apply("ADDED", raw)
    namespaces: Store[Mapping[str, str]] = Store(
        "Namespace", lambda raw: raw["metadata"].get("labels") or {}
    )
    namespaces.apply(
        "ADDED", {"metadata": {"name": NS, "resourceVersion": "1", "labels": dict(labels or {})}}
    )
    return Governor(HOOKS, policies=store, namespaces=namespaces)


def _claim(name: str, class_name: str = "gpu", **labels: str) -> ResourceClaim:
    raw = claim(name, class_name=class_name)
    raw["metadata"]["labels"] = labels
    return parse_resource_claim(raw, "v1")


def test_no_policy_keeps_the_base_settings_and_runs_every_hook() -> None:
    base = settings()

    choice = _governor().choose([_claim("c")], base)

    assert choice.policy == ""
    assert isinstance(choice.settings.policy, HookPolicy)
    assert [h.name for h in choice.settings.policy.hooks] == ["a", "b"]
    assert choice.settings.policy.base == FirstFit()
    assert choice.settings.budget == base.budget


def test_no_policy_and_no_hooks_is_exactly_the_base_settings() -> None:
    base = settings()

    choice = Governor().choose([_claim("c")], base)

    assert choice.settings is base


@pytest.mark.parametrize(
    ("policies", "claims", "winner"),
    [
        pytest.param(
            [_policy("any", strategy="Spread"), _policy("gpus", deviceClassNames=["gpu"])],
            [_claim("c")],
            "gpus",
            id="more-fields-set-wins",
        ),
        pytest.param(
            [_policy("b", strategy="Spread"), _policy("a", strategy="BinPack")],
            [_claim("c")],
            "a",
            id="ties-by-name",
        ),
        pytest.param(
            [
                _policy("gpus", deviceClassNames=["gpu"]),
                _policy("fpgas", deviceClassNames=["fpga"]),
            ],
            [_claim("c", class_name="other")],
            "",
            id="none-matches",
        ),
        pytest.param(
            [
                _policy("gpus", deviceClassNames=["gpu"]),
                _policy(
                    "fpgas-labelled",
                    deviceClassNames=["fpga"],
                    claimSelector={"matchLabels": {"x": "y"}},
                ),
            ],
            [_claim("c1"), _claim("c2", class_name="fpga", x="y")],
            "fpgas-labelled",
            id="most-specific-over-all-claims",
        ),
        pytest.param(
            [_policy("unknown-hook", deviceClassNames=["gpu"], hooks=["zzz"]), _policy("any")],
            [_claim("c")],
            "any",
            id="invalid-policy-governs-nothing",
        ),
        pytest.param(
            [_policy("ml", namespaceSelector={"matchLabels": {"team": "ml"}})],
            [_claim("c")],
            "ml",
            id="namespace-labels-from-the-store",
        ),
        pytest.param(
            [_policy("other", namespaceSelector={"matchLabels": {"team": "web"}})],
            [_claim("c")],
            "",
            id="namespace-labels-do-not-match",
        ),
        pytest.param([_policy("any")], [], "", id="nothing-to-allocate"),
    ],
)
def test_the_governing_policy(
    policies: list[dict[str, Any]], claims: list[ResourceClaim], winner: str
) -> None:
    choice = _governor(*policies, labels={"team": "ml"}).choose(claims, settings())

    assert choice.policy == winner


def test_the_winner_sets_strategy_weights_budget_and_hooks() -> None:
    policy = _policy(
        "p",
        strategy="BinPack",
        nodeScoring={"strategyWeight": 3, "hookWeight": 0},
        searchBudget={"steps": 500, "timeout": "250ms"},
        hooks=["b"],
    )

    choice = _governor(policy).choose([_claim("c")], settings())

    chosen = choice.settings.policy
    assert isinstance(chosen, HookPolicy)
    assert (chosen.base, chosen.strategy_weight, chosen.hook_weight) == (BinPack(), 3, 0)
    assert [h.name for h in chosen.hooks] == ["b"]
    assert (choice.settings.budget.max_steps, choice.settings.budget.timeout) == (500, 0.25)


def test_a_policy_listing_no_hooks_runs_none() -> None:
    choice = _governor(_policy("p", strategy="Spread", hooks=[])).choose([_claim("c")], settings())

    chosen = choice.settings.policy
    assert isinstance(chosen, HookPolicy)
    assert (chosen.base, chosen.hooks) == (Spread(), ())
    assert choice.settings.budget == settings().budget
