"""Device nominations across a leader change: what a new leader reads back from the server.

A nomination lives in the leader's ledger (`ClaimNominations`); a new leader (after a restart
or a Lease change) starts with an empty one, so between its start and the deallocation of the
victims' claims any pod could take the devices its predecessor evicted the victims for. What
the predecessor wrote stays on the server: the preemptor's `status.nominatedNodeName` and its
`DevicesNominated` condition (status True, `lastTransitionTime` when the devices were
nominated). From these the new leader holds the nomination again before its first decision:
what the preemptor's claims get on the nominated node once the claims reserved only for
terminating pods of lower priority there (the victims) are deallocated, for what is left of
the timeout. When nothing fits there any more, the nomination is dropped with a
`DeviceNominationLost` condition and Event, and the pod is decided (and may preempt) again.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from dra_operator.controllers.scheduler._preemption import DEVICES_NOMINATED
from dra_operator.controllers.scheduler.plugins.defaultpreemption import Candidate
from dra_operator.model import Pod, PodCondition

LOST = "DeviceNominationLost"
"""The Event reason, and the condition's reason, when a new leader cannot hold a nomination
its predecessor made."""


def devices_nominated(pod: Pod) -> PodCondition | None:
    """The pod's `DevicesNominated` condition when it says devices are nominated to it."""
    for condition in pod.status.conditions:
        if condition.type == DEVICES_NOMINATED and condition.status == "True":
            return condition
    return None


def to_adopt(pod: Pod) -> str:
    """The node of a nomination written on the server for an unbound pod, "" if none."""
    if pod.spec.node_name or pod.metadata.deletion_timestamp is not None:
        return ""
    if devices_nominated(pod) is None:
        return ""
    return pod.status.nominated_node_name


def remaining(pod: Pod, timeout: float, now: datetime.datetime) -> float:
    """Seconds left of the nomination's timeout, from its condition's transition time (the
    whole timeout when the server recorded none)."""
    condition = devices_nominated(pod)
    since = condition.last_transition_time if condition is not None else None
    if since is None:
        return timeout
    return timeout - (now - since).total_seconds()


def terminating_victims(pod: Pod, node: str, on_node: Iterable[Pod]) -> Candidate:
    """The node with the pods of lower priority being deleted there: the victims an earlier
    preemption evicted, as far as the server still shows them."""
    own = pod.spec.priority or 0
    victims = tuple(
        p
        for p in on_node
        if p.metadata.deletion_timestamp is not None and (p.spec.priority or 0) < own
    )
    return Candidate(node=node, victims=victims, num_pdb_violations=0)
