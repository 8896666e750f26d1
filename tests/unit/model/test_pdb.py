"""PodDisruptionBudget and the pod status fields preemption reads."""

from __future__ import annotations

import datetime

from dra_operator.model import (
    LabelSelector,
    parse_pod,
    parse_pod_disruption_budget,
)


def test_budget_keeps_selector_allowed_disruptions_and_disrupted_pods() -> None:
    budget = parse_pod_disruption_budget(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 2},
            "status": {
                "disruptionsAllowed": 1,
                "disruptedPods": {"web-0": "2026-01-01T00:00:00Z"},
            },
        }
    )
    assert budget.metadata.namespace == "ns"
    assert budget.selector is not None
    assert dict(budget.selector.match_labels) == {"app": "web"}
    assert budget.disruptions_allowed == 1
    assert budget.disrupted_pods == frozenset({"web-0"})


def test_budget_without_selector_or_status() -> None:
    budget = parse_pod_disruption_budget({"metadata": {"name": "b", "namespace": "ns"}})
    assert budget.selector is None
    assert budget.disruptions_allowed == 0
    assert budget.disrupted_pods == frozenset()
    assert LabelSelector() != budget.selector


def test_pod_status_nomination_and_start_time() -> None:
    pod = parse_pod(
        {
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"nominatedNodeName": "n1", "startTime": "2026-01-02T03:04:05Z"},
        }
    )
    assert pod.status.nominated_node_name == "n1"
    assert pod.status.start_time == datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    bare = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert bare.status.nominated_node_name == ""
    assert bare.status.start_time is None
