"""`explain pod` prints the devices a preemption nominated to the pod, or that the nomination
ended, from its `DevicesNominated` condition."""

from __future__ import annotations

from dra_operator import verify
from dra_operator.cli._explain import nomination_lines
from dra_operator.model import parse_pod


def _pod(name: str, *conditions: dict[str, str]) -> verify.ClusterState:
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        "status": {"conditions": list(conditions)},
    }
    return verify.ClusterState(pods=(parse_pod(raw),))


def test_a_nomination_held_and_one_expired_are_shown() -> None:
    held = {
        "type": "DevicesNominated",
        "status": "True",
        "reason": "DevicesNominated",
        "message": "devices gpu.example.com/n1/gpu-0 on node n1 are nominated to this pod",
    }
    assert nomination_lines(_pod("p", held), "ns", "p") == [
        "devices nominated by preemption (DevicesNominated): devices gpu.example.com/n1/gpu-0 "
        "on node n1 are nominated to this pod"
    ]
    expired = held | {"status": "False", "reason": "DeviceNominationExpired", "message": "gone"}
    assert nomination_lines(_pod("p", expired), "ns", "p") == [
        "device nomination ended (DeviceNominationExpired): gone"
    ]


def test_a_pod_without_the_condition_or_another_pod_shows_nothing() -> None:
    ready = {"type": "Ready", "status": "False", "reason": "", "message": ""}
    assert nomination_lines(_pod("p", ready), "ns", "p") == []
    assert nomination_lines(_pod("p"), "ns", "other") == []
