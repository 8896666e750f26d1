"""The configuration invariant: one allocator per device pool (docs/coexistence.md).

kube-scheduler and dra-operator each know only their own allocations in flight, so when both
place pods with claims over the same devices, a device can be allocated twice. That is the
case while kube-scheduler holds its Lease, pods with claims name dra-operator, and no routing
policy (deploy/components) keeps pods with claims away from kube-scheduler.
"""

from __future__ import annotations

from collections.abc import Iterable

from dra_operator import names
from dra_operator.model import Pod
from dra_operator.verify._state import Code, Schedulers, Violation

__all__ = ["check_coexistence"]


def check_coexistence(
    schedulers: Schedulers | None,
    pods: Iterable[Pod],
    scheduler_names: frozenset[str] = frozenset({names.DEFAULT_SCHEDULER_NAME}),
) -> list[Violation]:
    """One violation, on kube-scheduler's Lease, when the configuration is unsafe."""
    if schedulers is None or schedulers.kube_scheduler is None or schedulers.routing:
        return []
    ours = sum(
        1 for pod in pods if pod.spec.resource_claims and pod.spec.scheduler_name in scheduler_names
    )
    if not ours:
        return []
    return [
        Violation(
            code=Code.UNSAFE_CONFIGURATION,
            kind="Lease",
            name=schedulers.kube_scheduler,
            message=(
                f"kube-scheduler holds this Lease and {ours} pod(s) with resource claims name "
                "dra-operator, but no routing policy (deploy/components/route-claims or "
                "require-scheduler) keeps pods with claims away from kube-scheduler: both "
                "allocate the same devices and a device can be allocated twice. Fix: "
                "`kubectl apply --server-side -k deploy/` (Kubernetes 1.36+; "
                "deploy/release-1.34 or deploy/require-scheduler-only before) or "
                "`helm upgrade dra-operator deploy/helm/dra-operator --reuse-values "
                "--set routing.mode=auto`"
            ),
        )
    ]
