"""The DeviceTaintRule `EvictionInProgress` condition: reasons and upstream's message texts."""

from __future__ import annotations

import datetime

import pytest

from dra_operator import model
from dra_operator.controllers.eviction import (
    RuleCounts,
    is_unchanged,
    rule_condition,
    status_apply_body,
    wait_before_update,
)

from .builders import T0, rule, stamp

NONE_TAIL = (
    " if the effect was NoExecute. This information will not be updated again."
    " Recreate the DeviceTaintRule to trigger an update."
)


@pytest.mark.parametrize(
    ("effect", "counts", "status", "reason", "message"),
    [
        pytest.param(
            "NoExecute",
            RuleCounts(pending_pods=1, pending_namespaces=1),
            "True",
            "PodsPendingEviction",
            "1 pod needs to be evicted in 1 namespace.",
            id="pending-singular",
        ),
        pytest.param(
            "NoExecute",
            RuleCounts(pending_pods=3, pending_namespaces=2, evicted_pods=1),
            "True",
            "PodsPendingEviction",
            "3 pods need to be evicted in 2 different namespaces."
            " 1 pod evicted since starting the controller.",
            id="pending-plural-with-evicted",
        ),
        pytest.param(
            "NoExecute",
            RuleCounts(evicted_pods=2),
            "False",
            "Completed",
            "2 pods evicted since starting the controller.",
            id="completed",
        ),
        pytest.param("NoExecute", RuleCounts(), "False", "NotStarted", "", id="not-started"),
        pytest.param(
            "None",
            RuleCounts(
                pending_pods=1, pending_namespaces=1, published_devices=1, allocated_devices=1
            ),
            "False",
            "NoEffect",
            "1 published device selected. 1 allocated device selected."
            " 1 pod would be evicted in 1 namespace" + NONE_TAIL,
            id="no-effect-singular",
        ),
        pytest.param(
            "None",
            RuleCounts(published_devices=4, allocated_devices=2),
            "False",
            "NoEffect",
            "4 published devices selected. 2 allocated devices selected."
            " 0 pods would be evicted in 0 different namespaces" + NONE_TAIL,
            id="no-effect-plural",
        ),
        pytest.param(
            "NoSchedule",
            RuleCounts(),
            "False",
            "OtherEffect",
            "Eviction only happens for the NoExecute effect.",
            id="other-effect",
        ),
    ],
)
def test_condition(effect: str, counts: RuleCounts, status: str, reason: str, message: str) -> None:
    r = model.parse_device_taint_rule(rule(effect=effect, selector={}, generation=3), "v1beta2")
    condition = rule_condition(r, counts)
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "EvictionInProgress",
        status,
        reason,
        message,
    )
    assert condition.observed_generation == 3


def _with_condition(generation: int, observed: int, at: datetime.datetime) -> model.DeviceTaintRule:
    cond = {
        "type": "EvictionInProgress",
        "status": "False",
        "reason": "NotStarted",
        "message": "",
        "observedGeneration": observed,
        "lastTransitionTime": stamp(at),
    }
    return model.parse_device_taint_rule(
        rule(selector={}, generation=generation, conditions=[cond]), "v1beta2"
    )


@pytest.mark.parametrize(
    ("generation", "observed", "elapsed", "wait"),
    [
        pytest.param(1, 1, 3, 7.0, id="too-soon"),
        pytest.param(1, 1, 10, 0.0, id="period-over"),
        pytest.param(2, 1, 3, 0.0, id="new-generation-now"),
    ],
)
def test_wait_before_update(generation: int, observed: int, elapsed: int, wait: float) -> None:
    r = _with_condition(generation, observed, T0)
    assert wait_before_update(r, T0 + datetime.timedelta(seconds=elapsed)) == wait


def test_unchanged_condition_is_not_written_and_body_names_the_uid() -> None:
    r = _with_condition(1, 1, T0)
    condition = rule_condition(r, RuleCounts())
    assert is_unchanged(r, condition)
    assert not is_unchanged(r, rule_condition(r, RuleCounts(evicted_pods=1)))
    body = status_apply_body(r, condition, "resource.k8s.io/v1beta2", T0)
    assert body["metadata"] == {"name": "r1", "uid": "uid-r1"}
    assert body["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
