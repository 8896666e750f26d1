"""A new leader holds again the device nominations its predecessor wrote on the server
(`_adoption.py`, `Preemptor.adopt`), or drops them saying why."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Coroutine
from typing import Any

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import Placement, State, decide_pod
from dra_operator.controllers.scheduler._adoption import (
    LOST,
    remaining,
    terminating_victims,
    to_adopt,
)
from dra_operator.controllers.scheduler._claim_nomination import EXPIRED, NOMINATED
from dra_operator.controllers.scheduler._preemptor import Preemptor
from dra_operator.model import Pod, parse_pod

from .builders import NS, claim, device_class, node, pod, resource_slice, settings
from .test_preemption_cycle import _holding, _pod, _prioritized, _state

NOW = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.UTC)
STAMP = "2026-11-27T11:58:00Z"  # two minutes before NOW


class Notes:
    """What the preemptor writes on pods: (pod name, status, reason, message)."""

    def __init__(self) -> None:
        self.written: list[tuple[str, str, str, str]] = []

    async def note(self, pod: Pod, *, status: str, reason: str, message: str) -> None:
        self.written.append((pod.metadata.name, status, reason, message))


def _nominated(raw: dict[str, Any], node_name: str, *, stamp: str = STAMP) -> dict[str, Any]:
    condition = {"type": NOMINATED, "status": "True", "reason": NOMINATED}
    condition["lastTransitionTime"] = stamp
    raw["status"] = {"nominatedNodeName": node_name, "conditions": [condition]}
    return raw


def _terminating(raw: dict[str, Any]) -> dict[str, Any]:
    raw["metadata"]["deletionTimestamp"] = STAMP
    return raw


def _cluster(*, terminating: bool = True) -> State:
    """n1 with one GPU, held by `low` (terminating, unless told); `high` nominated to n1."""
    low = _prioritized(pod("low", claims=["held"], node_name="n1"), 0)
    low = _terminating(low) if terminating else low
    high = _nominated(_prioritized(pod("high", claims=["wanted"]), 1000), "n1")
    return _state(
        ("class", device_class()),
        ("node", node("n1", allocatable={"cpu": "8", "pods": "10"})),
        ("slice", resource_slice("n1", 1)),
        ("claim", _holding(claim("held"), "n1", low)),
        ("claim", claim("wanted")),
        ("claim", claim("other")),
        ("pod", low),
        ("pod", high),
    )


def _preemptor(state: State, notes: Notes) -> Preemptor:
    preemptor = Preemptor(state, notes, budgets=lambda: ())  # type: ignore[arg-type]
    for entry in state.pods:
        preemptor.pod_changed(None, entry.obj)
    return preemptor


def _run(writes: list[Coroutine[Any, Any, None]]) -> None:
    async def all_of() -> None:
        for write in writes:
            await write

    asyncio.run(all_of())


def test_an_unbound_pod_with_a_true_condition_and_a_node_is_to_adopt() -> None:
    nominated = parse_pod(_nominated(pod("p"), "n1"))
    assert to_adopt(nominated) == "n1"
    assert to_adopt(parse_pod(pod("p"))) == ""
    bound = _nominated(pod("p", node_name="n1"), "n1")
    assert to_adopt(parse_pod(bound)) == ""
    ended = _nominated(pod("p"), "n1")
    ended["status"]["conditions"][0]["status"] = "False"
    assert to_adopt(parse_pod(ended)) == ""


def test_what_is_left_counts_from_the_condition_transition() -> None:
    nominated = parse_pod(_nominated(pod("p"), "n1"))
    assert remaining(nominated, 300, NOW) == 180
    unstamped = _nominated(pod("p"), "n1")
    del unstamped["status"]["conditions"][0]["lastTransitionTime"]
    assert remaining(parse_pod(unstamped), 300, NOW) == 300


def test_the_victims_are_the_terminating_pods_of_lower_priority() -> None:
    preemptor = parse_pod(_prioritized(pod("high"), 10))
    pods = [
        parse_pod(_terminating(_prioritized(pod("going"), 5))),
        parse_pod(_prioritized(pod("staying"), 5)),
        parse_pod(_terminating(_prioritized(pod("above"), 20))),
    ]
    found = terminating_victims(preemptor, "n1", pods)
    assert [v.metadata.name for v in found.victims] == ["going"]


def test_a_new_leader_holds_the_nomination_and_another_pod_gets_nothing() -> None:
    state, notes = _cluster(), Notes()
    preemptor = _preemptor(state, notes)
    assert preemptor.adopting
    held, writes = preemptor.adopt(settings(), NOW)
    assert [(p.metadata.name, left) for p, left in held] == [("high", 180)]
    assert writes == [] and not preemptor.adopting
    high = _pod(state, "high")
    nomination = preemptor.claims.held(high.metadata.uid)
    assert nomination is not None and nomination.devices() == ["gpu.example.com/n1/gpu-0"]

    # The victim goes and its claim is deallocated: the GPU stays nominated to `high`.
    victim = state.claims.get(ObjectKey(NS, "held"))
    assert victim is not None
    gone = state.claims.apply("DELETED", victim.raw)
    assert gone is not None
    state.ledger.observe(gone)
    other = state.pods.apply("ADDED", _prioritized(pod("another", claims=["other"]), 0))
    assert other is not None and other.new is not None
    assert not isinstance(decide_pod(other.new.obj, state, settings()), Placement)
    preemptor.claims.release(high.metadata.uid)
    mine = decide_pod(high, state, settings())
    assert isinstance(mine, Placement) and mine.node == "n1"


def test_a_nomination_past_its_time_is_not_held_and_its_condition_turns_false() -> None:
    state, notes = _cluster(), Notes()
    preemptor = _preemptor(state, notes)
    held, writes = preemptor.adopt(settings(), NOW + datetime.timedelta(seconds=300))
    assert held == []
    _run(writes)
    assert [(n, s, r) for n, s, r, _ in notes.written] == [("high", "False", EXPIRED)]
    assert preemptor.claims.held(_pod(state, "high").metadata.uid) is None


def test_a_nomination_that_no_longer_fits_is_dropped_saying_so() -> None:
    state, notes = _cluster(terminating=False), Notes()  # the GPU's holder stays
    preemptor = _preemptor(state, notes)
    held, writes = preemptor.adopt(settings(), NOW)
    assert held == []
    _run(writes)
    [(name, status, reason, message)] = notes.written
    assert (name, status, reason) == ("high", "False", LOST)
    assert "node n1" in message
    # Once dropped, a later update of the pod (the condition still True) is not adopted again.
    preemptor.pod_changed(None, _pod(state, "high"))
    assert not preemptor.adopting
