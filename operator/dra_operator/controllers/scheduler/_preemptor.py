"""Preemption in the live scheduler: the PostFilter step of a pod found unschedulable.

kube-scheduler v1.37.2 runs PostFilter (DefaultPreemption) when no node passes Filter; when it
finds a candidate, the victims are evicted and the preemptor nominated to the node
(`status.nominatedNodeName`), then the pod waits in the unschedulable queue until the victims
are gone. Here the scheduler calls `Preemptor.post_filter` on an `Unschedulable` decision of a
pod: `find_victims` chooses (serially, with the decision), the nomination goes into the
framework's `Nominator` at once, so the next decision already counts it, and the writes run as
a task (`carry_out`). The nomination is dropped when the pod binds or is deleted
(`pod_changed`); a pod whose status names a nominated node (written by an earlier term, or
another scheduler) is nominated there as upstream's queue does on a pod update.

With devices (KEP-5690, beyond upstream), what the preemptor's claims would get on the node is
nominated to it in the ledger (`ClaimNominations`) and said in a `DevicesNominated` condition
and Event; the scheduler releases it around the pod's own decisions (`before_decide`,
`after_decide`); it ends when the pod binds, is deleted, or times out (condition False,
reason and Event `DeviceNominationExpired`). A new leader holds again the nominations written
on the server (`adopt`, `_adoption`).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._adoption import (
    LOST,
    remaining,
    terminating_victims,
    to_adopt,
)
from dra_operator.controllers.scheduler._claim_nomination import (
    EXPIRED,
    NOMINATED,
    ClaimNominations,
    Held,
)
from dra_operator.controllers.scheduler._preemption import (
    PreemptionRecorder,
    PreemptionWriter,
    lower_priority_nominated,
)
from dra_operator.controllers.scheduler._preemption_cycle import (
    find_victims,
    nominated_allocation,
)
from dra_operator.controllers.scheduler._state import Settings, State
from dra_operator.controllers.scheduler.plugins.defaultpreemption import Candidate
from dra_operator.controllers.scheduler.plugins.dynamicresources import claims_to_allocate
from dra_operator.model import Pod, PodDisruptionBudget
from dra_operator.observability import get_logger

_log = get_logger("dra_operator.controllers.scheduler")


@dataclass(frozen=True, slots=True)
class Preempting:
    """What PostFilter found: the text appended to FailedScheduling, and the candidate to
    carry out (None: preemption does not help)."""

    message: str
    candidate: Candidate | None = None


class Preemptor:
    """See the module docstring."""

    def __init__(
        self,
        state: State,
        writer: PreemptionWriter,
        *,
        budgets: Callable[[], Sequence[PodDisruptionBudget]],
        metrics: PreemptionRecorder | None = None,
    ) -> None:
        self._state = state
        self._writer = writer
        self._budgets = budgets
        self._metrics = metrics
        self._victims: dict[str, frozenset[str]] = {}  # preemptor UID -> its victims' UIDs
        # Nominations written on the server and not held here: pod UID -> the pod's key.
        self._adopt: dict[str, ObjectKey] = {}
        self._ended: set[str] = set()  # pods whose nomination this leader let expire
        assert state.framework is not None  # set by State
        # The live frameworks share one handle, hence one Nominator, as upstream's queue.
        self.nominator = state.framework.nominator
        self.claims = ClaimNominations(state.ledger)

    def pod_changed(self, old: Pod | None, new: Pod | None) -> None:
        """Drop the nomination of a pod bound or deleted; take one a pod's status names."""
        if new is None or new.spec.node_name:
            gone = new if new is not None else old
            if gone is not None:
                self.nominator.delete(gone.metadata.uid)
                self._victims.pop(gone.metadata.uid, None)
                self._adopt.pop(gone.metadata.uid, None)
                if new is None:
                    self._ended.discard(gone.metadata.uid)
                if self.claims.held(gone.metadata.uid) is not None:
                    self.claims.drop(gone.metadata.uid)
                    self._count("bound" if new is not None else "deleted")
            return
        uid = new.metadata.uid
        nominated = new.status.nominated_node_name
        if nominated and self.nominator.node_of(uid) != nominated:
            self.nominator.add(new, nominated)
        if to_adopt(new) and self.claims.held(uid) is None and uid not in self._ended:
            self._adopt[uid] = ObjectKey(new.metadata.namespace, new.metadata.name)

    @property
    def adopting(self) -> bool:
        """Whether nominations written on the server wait to be held here."""
        return bool(self._adopt)

    def adopt(
        self, settings: Settings, now: datetime.datetime
    ) -> tuple[list[tuple[Pod, float]], list[Coroutine[Any, Any, None]]]:
        """Hold the nominations an earlier leader wrote (see `_adoption`), before any decision:
        the pods held again with the seconds left to them, and the writes of those that
        expired or no longer fit."""
        held: list[tuple[Pod, float]] = []
        writes: list[Coroutine[Any, Any, None]] = []
        for uid, key in sorted(self._adopt.items(), key=lambda item: item[1]):
            entry = self._state.pods.get(key)
            pod = entry.obj if entry is not None else None
            if pod is None or pod.metadata.uid != uid or self.claims.held(uid) is not None:
                continue
            node = to_adopt(pod)
            if not node or not claims_to_allocate(pod, self._state, settings.features):
                continue  # nothing to hold: its claims are allocated (it is being bound)
            left = remaining(pod, self.claims.timeout, now)
            if left <= 0:
                self._ended.add(uid)
                self._count("expired")
                message = (
                    f"devices on node {node} are no longer nominated to this pod: not placed "
                    f"within {self.claims.timeout:g}s"
                )
                writes.append(
                    self._writer.note(pod, status="False", reason=EXPIRED, message=message)
                )
                continue
            on_node = self._state.node_infos.snapshot().get(node)
            candidate = terminating_victims(
                pod, node, (i.pod for i in on_node.pods) if on_node else ()
            )
            allocations = nominated_allocation(pod, candidate, self._state, settings)
            if not allocations:
                self._ended.add(uid)
                self._count("lost")
                message = (
                    f"devices nominated to this pod on node {node} by an earlier leader could not "
                    "be held again: they would not be free once its victims go"
                )
                writes.append(self._writer.note(pod, status="False", reason=LOST, message=message))
                continue
            self._victims[uid] = frozenset(v.metadata.uid for v in candidate.victims)
            self.claims.hold(uid, node, allocations, remaining=left)
            self._count("adopted")
            _log.info("preemption.adopted", pod=f"{key.namespace}/{key.name}", node=node)
            held.append((pod, left))
        self._adopt.clear()
        return held, writes

    def post_filter(self, pod: Pod, settings: Settings) -> Preempting:
        """DefaultPreemption for `pod`; a candidate found is nominated at once.

        While victims of the pod's last preemption are still in the pod cache, it does not
        preempt again: upstream's eligibility check reads the same from the nominated node's
        terminating pods, which the cache may not show yet when the pod is decided again.
        """
        uid = pod.metadata.uid
        if self.nominator.node_of(uid) and self._victims_remain(uid):
            return Preempting("")
        candidate, message = find_victims(
            pod,
            self._state,
            settings,
            nominator=self.nominator,
            budgets=self._budgets,
            metrics=self._metrics,
        )
        if candidate is not None:
            self.nominator.add(pod, candidate.node)
            self._victims[uid] = frozenset(v.metadata.uid for v in candidate.victims)
            allocations = nominated_allocation(pod, candidate, self._state, settings)
            if allocations:
                self.claims.hold(uid, candidate.node, allocations)
                self._count("held")
            _log.info(
                "preemption.chosen",
                pod=f"{pod.metadata.namespace}/{pod.metadata.name}",
                node=candidate.node,
                victims=[f"{v.metadata.namespace}/{v.metadata.name}" for v in candidate.victims],
            )
        return Preempting(message, candidate)

    def before_decide(self, pod: Pod) -> Held | None:
        """The pod's nominated devices, out of the ledger for its own decision."""
        return self.claims.release(pod.metadata.uid)

    def after_decide(
        self, pod: Pod, held: Held, *, placed: bool
    ) -> Coroutine[Any, Any, None] | None:
        """Back into the ledger unless placed; the writes saying it expired, if it did."""
        uid = pod.metadata.uid
        if placed:  # counted "bound" when the binding shows
            return None
        if self.claims.restore(uid):
            return None
        self._ended.add(uid)
        self._count("expired")
        message = (
            f"devices {', '.join(held.devices())} on node {held.node} are no longer nominated "
            f"to this pod: not placed within {self.claims.timeout:g}s"
        )
        return self._writer.note(pod, status="False", reason=EXPIRED, message=message)

    def _count(self, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.device_nomination(outcome)

    def _victims_remain(self, uid: str) -> bool:
        victims = self._victims.get(uid, frozenset())
        return any(entry.obj.metadata.uid in victims for entry in self._state.pods)

    async def carry_out(self, pod: Pod, candidate: Candidate) -> None:
        """Evict the victims, clear the lower-priority nominations on the node, then write
        the preemptor's `status.nominatedNodeName`."""
        lower = lower_priority_nominated(self.nominator, pod, candidate.node)
        for other in lower:
            self.nominator.delete(other.metadata.uid)
        await self._writer.preempt(pod, candidate, lower)
        await self._writer.nominate(pod, candidate.node)
        held = self.claims.held(pod.metadata.uid)
        if held is not None:
            message = (
                f"devices {', '.join(held.devices())} on node {held.node} are nominated to this "
                "pod until it binds, is deleted or waits longer than "
                f"{self.claims.timeout:g}s for its preemption victims to go"
            )
            await self._writer.note(pod, status="True", reason=NOMINATED, message=message)
