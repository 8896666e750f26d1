"""The AllocationPolicy status writer (leader only): what the operator made of each policy.

`PolicyStatusReconciler` recomputes every policy's status after changes and writes the ones that
changed through `PolicyStatusWriter` (`KubePolicyStatusWriter` over `kube.Client`). Which policy
governs a decision is the scheduler's business (`controllers.scheduler.Governor`); both use the
same pure functions of `dra_operator.hooks`. See docs/policies.md.
"""

from dra_operator.controllers.policies._kube import KubePolicyStatusWriter
from dra_operator.controllers.policies._status import (
    ALL_POLICIES,
    STATUS_DELAY,
    PolicyStatusReconciler,
    PolicyStatusWriter,
)

__all__ = [
    "ALL_POLICIES",
    "STATUS_DELAY",
    "KubePolicyStatusWriter",
    "PolicyStatusReconciler",
    "PolicyStatusWriter",
]
