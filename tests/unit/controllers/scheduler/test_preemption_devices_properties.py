"""Device-aware preemption over random clusters (KEP-5690, beyond kube-scheduler v1.37.2).

Nodes with one or two GPUs; low-priority pods placed on them, each holding a GPU through a
claim of its own or sharing one claim with another pod; a high-priority pod with a claim for
one GPU finds none free. When DefaultPreemption finds a candidate, its outcome is carried out
as the cluster would: the victims go, and the claims reserved only for victims are deallocated
(the claims controller's part) while the preemptor's devices are nominated in the ledger. Then:

- the simulation and the real outcome agree: the preemptor's own decision places it on the
  candidate node with the nominated devices;
- no device is promised to two pods: another pod decided meanwhile (any priority) gets none
  of the nominated devices, and a claim shared with a pod that stays is never freed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import Placement, State, decide_pod
from dra_operator.controllers.scheduler._claim_nomination import ClaimNominations
from dra_operator.controllers.scheduler._preemption_cycle import (
    claims_freed,
    find_victims,
    nominated_allocation,
)
from dra_operator.controllers.scheduler.framework import Nominator
from dra_operator.model import Pod

from .builders import NS, claim, device_class, node, pod, resource_slice, settings
from .test_preemption_cycle import _pod, _prioritized, _state

Holder = tuple[int, int, int, bool]  # node, device, priority, shared with the next holder


def _allocated(raw: dict[str, Any], node_name: str, device: int, *holders: dict[str, Any]) -> None:
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": node_name,
                        "device": f"gpu-{device}",
                    }
                ]
            },
        },
        "reservedFor": [
            {"resource": "pods", "name": h["metadata"]["name"], "uid": h["metadata"]["uid"]}
            for h in holders
        ],
    }


@st.composite
def clusters(draw: st.DrawFn) -> tuple[State, list[str]]:
    """Every GPU held by low-priority pods; returns the state and the holders' names."""
    sizes = draw(st.lists(st.integers(1, 2), min_size=1, max_size=3))
    objects: list[tuple[str, dict[str, Any]]] = [("class", device_class())]
    for at, size in enumerate(sizes):
        objects.append(("node", node(f"n{at}", allocatable={"cpu": "8", "pods": "20"})))
        objects.append(("slice", resource_slice(f"n{at}", size)))
    names: list[str] = []
    for at, size in enumerate(sizes):
        for device in range(size):
            shared = draw(st.booleans())
            holders = []
            for extra in range(2 if shared else 1):
                name = f"h{at}-{device}-{extra}"
                priority = draw(st.integers(0, 20))  # above 10: not a victim of the preemptor
                holders.append(
                    _prioritized(
                        pod(name, claims=[f"c{at}-{device}"], node_name=f"n{at}"), priority
                    )
                )
                names.append(name)
            held = claim(f"c{at}-{device}")
            _allocated(held, f"n{at}", device, *holders)
            objects.append(("claim", held))
            objects += [("pod", h) for h in holders]
    objects.append(("claim", claim("wanted")))
    objects.append(("claim", claim("other")))
    objects.append(("pod", _prioritized(pod("high", claims=["wanted"]), 10)))
    return _state(*objects), names


def _devices(placement: Placement) -> set[tuple[str, str]]:
    return {
        (r.pool, r.device)
        for write in placement.claims
        if write.allocation is not None
        for r in write.allocation.devices.results
    }


def _remove(state: State, victim: Pod) -> None:
    """The victim is gone (the kubelet finished it): out of the pod cache and the NodeInfos."""
    raw = state.pods.get(ObjectKey(NS, victim.metadata.name))
    assert raw is not None
    state.pods.apply("DELETED", raw.raw)
    state.node_infos.forget(victim.metadata.uid)


@given(clusters(), st.integers(0, 30))
def test_a_preemption_frees_what_the_preemptor_needs_and_nobody_else_takes_it(
    cluster: tuple[State, list[str]], other_priority: int
) -> None:
    state, _ = cluster
    high = _pod(state, "high")
    candidate, _ = find_victims(high, state, settings(), nominator=Nominator(), budgets=lambda: ())
    event("preempted" if candidate is not None else "no candidate")
    if candidate is None:
        return
    assert all((v.spec.priority or 0) < 10 for v in candidate.victims)
    allocations = nominated_allocation(high, candidate, state, settings())
    assert allocations, "the simulation found room the allocator does not"
    nominations = ClaimNominations(state.ledger)
    held = nominations.hold(high.metadata.uid, candidate.node, allocations)
    freed = claims_freed(state, candidate.victims)
    for victim in candidate.victims:
        _remove(state, victim)
    for entry in list(state.claims):
        if entry.obj.metadata.uid in freed:
            change = state.claims.apply("DELETED", entry.raw)
            assert change is not None
            state.ledger.observe(change)
    nominated = {tuple(d.split("/")[1:]) for d in held.devices()}

    other = _prioritized(pod("other-pod", claims=["other"]), other_priority)
    change = state.pods.apply(
        "ADDED", other | {"metadata": {**other["metadata"], "resourceVersion": "999"}}
    )
    assert change is not None and change.new is not None
    decided = decide_pod(change.new.obj, state, settings())
    if isinstance(decided, Placement):
        assert not _devices(decided) & nominated  # never promised to two pods
        for write in decided.claims:
            if write.allocation is not None:
                state.ledger.reserve(write.uid, write.allocation)

    nominations.release(high.metadata.uid)
    mine = decide_pod(high, state, settings())
    assert isinstance(mine, Placement), mine
    assert mine.node == candidate.node
    assert _devices(mine) == nominated
