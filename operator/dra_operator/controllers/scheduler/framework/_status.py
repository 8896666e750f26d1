"""Plugin verdicts: kube-scheduler's framework `Status` and its codes.

A plugin says what it found as a value, never by raising: the cycle reads the code to decide
whether a node is out for this pod only (`UNSCHEDULABLE`: preemption may help) or for good
(`UNSCHEDULABLE_AND_UNRESOLVABLE`: it will not), and the reasons become the FailedScheduling
text, counted as upstream counts them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Code(enum.Enum):
    """kube-scheduler's `framework.Code`, same names and meaning."""

    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"
    PENDING = "Pending"


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's answer: a code, the reasons a user reads, and who said it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def rejects(self) -> bool:
        """The node (or pod) is out: what Filter and PreFilter failures have in common."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(reason: str) -> Status:
    return Status(Code.ERROR, (reason,))
