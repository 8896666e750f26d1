"""The configuration invariant: one allocator per device pool (docs/coexistence.md).

kube-scheduler and dra-operator each know only their own allocations in flight, so when both
place pods with claims over the same devices, a device can be allocated twice. That is the
case while kube-scheduler holds its Lease, pods with claims name dra-operator, and no routing
policy (deploy/components) keeps pods with claims away from kube-scheduler.

The routing policies send a pod asking for a DRA-backed extended resource to dra-operator only
if the name was mapped (by a DeviceClass) when the pod was created: a pod created earlier stays
with its scheduler, which allocates from the same devices (`check_unrouted`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dra_operator import names
from dra_operator.model import DeviceClass, ExtendedResourceClasses, Node, Pod, Quantity
from dra_operator.verify._state import Code, Schedulers, Violation

__all__ = ["check_coexistence", "check_unrouted", "unrouted_names"]

_FINISHED = frozenset({"Succeeded", "Failed"})


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


def unrouted_names(
    pod: Pod,
    classes: ExtendedResourceClasses,
    ours: frozenset[str],
    allocatable: Mapping[str, Quantity] | None = None,
) -> list[str]:
    """The DRA-backed extended resources `pod` asks for while another scheduler places it.

    Empty for our pods, finished pods, and names the pod's node advertises (`allocatable`,
    the node's `status.allocatable` when the pod is bound): a device plugin serves those.
    """
    if pod.spec.scheduler_name in ours or pod.status.phase in _FINISHED:
        return []
    asked: set[str] = set()
    for container in (*pod.spec.containers, *pod.spec.init_containers):
        for amounts in (container.requests, container.limits):
            asked.update(n for n, q in amounts.items() if q.sign > 0)
    advertised = allocatable or {}
    return sorted(
        n
        for n in asked
        if classes.class_for(n) is not None and (n not in advertised or advertised[n].sign <= 0)
    )


def check_unrouted(
    schedulers: Schedulers | None,
    pods: Iterable[Pod],
    classes: Iterable[DeviceClass],
    nodes: Iterable[Node],
    scheduler_names: frozenset[str] = frozenset({names.DEFAULT_SCHEDULER_NAME}),
) -> list[Violation]:
    """One violation per pod another scheduler places although it asks for a DRA-backed
    extended resource, while dra-operator allocates devices here (a routing policy is bound)."""
    if schedulers is None or not schedulers.routing:
        return []
    mapping = ExtendedResourceClasses.of(classes)
    if not mapping.by_name:
        return []
    allocatable = {node.name: node.allocatable for node in nodes}
    found = []
    for pod in pods:
        asked = unrouted_names(pod, mapping, scheduler_names, allocatable.get(pod.spec.node_name))
        if not asked:
            continue
        scheduler = pod.spec.scheduler_name or "default-scheduler"
        found.append(
            Violation(
                code=Code.UNSAFE_CONFIGURATION,
                kind="Pod",
                name=f"{pod.metadata.namespace}/{pod.metadata.name}",
                message=(
                    f"asks for {', '.join(asked)}, which a DeviceClass serves from DRA devices, "
                    f"but {scheduler} places it (it was created before the name was mapped): "
                    "its devices may also be allocated by dra-operator. Fix: recreate the pod, "
                    "the routing policies then send it to dra-operator"
                ),
            )
        )
    return found
