"""PrioritySort (QueueSort): higher priority first, then the pod that waited longer.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/queuesort. Upstream orders equal
priorities by the time the pod entered the scheduling queue; a `Pod` carries no such time, so
this orders them by creation time, then by namespace/name to stay total.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from dra_operator.controllers.scheduler.framework import Handle
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "PrioritySort"

_EPOCH = datetime.datetime.min.replace(tzinfo=datetime.UTC)


def _key(pod: Pod) -> tuple[int, datetime.datetime, str, str]:
    meta = pod.metadata
    # -priority: a higher priority sorts first; a pod without one has priority 0
    return (-(pod.spec.priority or 0), meta.creation_timestamp or _EPOCH, meta.namespace, meta.name)


class PrioritySort:
    @property
    def name(self) -> str:
        return NAME

    def less(self, a: Pod, b: Pod) -> bool:
        """Whether `a` is scheduled before `b`."""
        return _key(a) < _key(b)


def new(args: Mapping[str, object], handle: Handle) -> PrioritySort:
    check_known(args, "args", ())
    return PrioritySort()
