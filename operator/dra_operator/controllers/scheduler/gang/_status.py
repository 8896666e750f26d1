"""The PodGroup's `PodGroupInitiallyScheduled` condition after a cycle (kube-scheduler v1.37.2,
`submitPodGroupAlgorithmResult` and `updatePodGroupCondition`).

kube-scheduler v1.36.5 writes the same condition under the type `PodGroupScheduled`
(`SCHEDULED_1_36`), with an empty message when the cycle failed (its status has no reason).

True with reason `Scheduled` when the gang was placed, False with `Unschedulable` and the
cycle's text when not. A condition already True is never set back to False (it is terminal),
and a patch that would change nothing is not sent (`meta.SetStatusCondition`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from dra_operator import names

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
SCHEDULED_1_36 = "PodGroupScheduled"


def condition_patch(
    raw: Mapping[str, Any],
    *,
    ok: bool,
    message: str,
    now: datetime.datetime,
    kind: str = names.CONDITION_POD_GROUP_INITIALLY_SCHEDULED,
) -> dict[str, Any] | None:
    """A merge patch of the `kind` condition of the PodGroup `raw`, or None to send nothing."""
    status = raw.get("status") or {}
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    existing = next(
        (c for c in conditions if c.get("type") == kind),
        None,
    )
    wanted = "True" if ok else "False"
    if existing is not None and existing.get("status") == "True" and not ok:
        return None
    generation = (raw.get("metadata") or {}).get("generation")
    condition: dict[str, Any] = {
        "type": kind,
        "status": wanted,
        "reason": SCHEDULED if ok else UNSCHEDULABLE,
        "message": message,
        "lastTransitionTime": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if generation is not None:
        condition["observedGeneration"] = generation
    if existing is not None:
        if all(existing.get(k) == condition.get(k) for k in _COMPARED):
            return None
        if existing.get("status") == wanted and existing.get("lastTransitionTime"):
            condition["lastTransitionTime"] = existing["lastTransitionTime"]
    others = [c for c in conditions if c.get("type") != kind]
    return {"status": {"conditions": [*others, condition]}}


_COMPARED = ("status", "reason", "message", "observedGeneration")
