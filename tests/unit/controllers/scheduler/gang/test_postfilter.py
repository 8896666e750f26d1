"""PodGroupPostFilter (kube-scheduler v1.37.2): DynamicResources' step over the members a failed
cycle tried, DefaultPreemption's up to choosing victims, and the chain's text.

Cases named as upstream's `TestPodGroupPostFilter` (plugins/dynamicresources) where they are
ported; "disabled" and "skip-deallocate-topology-aware-podgroup" have no counterpart (the
plugin is always on, and the operator does not place groups with topology constraints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dra_operator.controllers.scheduler.gang import (
    Action,
    Status,
    Tried,
    chain,
    dynamic_resources,
    group_message,
    pod_group_preemption,
)
from dra_operator.model import (
    Pod,
    PodGroup,
    ResourceClaim,
    parse_pod,
    parse_pod_group,
    parse_resource_claim,
)

NS = "default"
GROUP_UID = "pg-uid"


def _group(*, claims: bool = True, **spec: Any) -> PodGroup:
    raw_spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 2}}, **spec}
    if claims:
        raw_spec["resourceClaims"] = [{"name": "res", "resourceClaimName": "group-claim"}]
    return parse_pod_group(
        {"metadata": {"name": "pg", "namespace": NS, "uid": GROUP_UID}, "spec": raw_spec}
    )


def _pod(name: str, claim: str = "group-claim", **spec: Any) -> Pod:
    return parse_pod(
        {
            "metadata": {"name": name, "namespace": NS, "uid": f"{name}-uid"},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "schedulingGroup": {"podGroupName": "pg"},
                "resourceClaims": [{"name": "res", "resourceClaimName": claim}],
                **spec,
            },
        }
    )


def _claim(
    name: str, *, reserved_for: Sequence[tuple[str, str, str]] = (), **extra: Any
) -> ResourceClaim:
    status: dict[str, Any] = {
        "allocation": {
            "devices": {
                "results": [{"request": "r", "driver": "d", "pool": "p", "device": "dev-0"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    }
    if reserved_for:
        status["reservedFor"] = [
            {
                "resource": r,
                "name": n,
                "uid": u,
                **({"apiGroup": "scheduling.k8s.io"} if r == "podgroups" else {}),
            }
            for r, n, u in reserved_for
        ]
    metadata: dict[str, Any] = {"name": name, "namespace": NS, "uid": f"{name}-uid", **extra}
    return parse_resource_claim(
        {
            "metadata": metadata,
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}},
            "status": status,
        }
    )


POD = _pod("pod")
POD2 = _pod("pod-2")
POD_LEVEL = _pod("pod-podlevel", claim="claim-2")
IN_USE = _claim("group-claim", reserved_for=[("pods", "pod", "pod-uid")])
IN_USE_BY_GROUP = _claim("group-claim", reserved_for=[("podgroups", "pg", GROUP_UID)])
IN_USE_FOR_POD_LEVEL = _claim(
    "claim-2", reserved_for=[("pods", "pod-podlevel", "pod-podlevel-uid")]
)
EXTENDED = _claim(
    "pod-extended-resources",
    reserved_for=[("pods", "pod", "pod-uid")],
    annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
    ownerReferences=[
        {"apiVersion": "v1", "kind": "Pod", "name": "pod", "uid": "pod-uid", "controller": True}
    ],
)


def _pods(tried: list[Tried]) -> list[Pod]:
    return [t.pod for t in tried]


def _actions(status: Status) -> list[tuple[Action, str]]:
    return [(a.action, a.claim.metadata.name) for a in status.actions]


@pytest.mark.parametrize(
    ("tried", "group_claims", "workload_claims", "want", "final", "actions"),
    [
        pytest.param(
            [Tried(pod=POD)],
            [],
            False,
            "deallocation and deletion of ResourceClaims completed",
            False,
            [],
            id="empty",
        ),
        pytest.param(
            [Tried(pod=POD, unavailable=(IN_USE,))],
            [],
            True,
            "deallocation and deletion of ResourceClaims completed",
            False,
            [(Action.DEALLOCATE, "group-claim")],
            id="deallocate-pod-level-claim",
        ),
        pytest.param(
            [Tried(pod=POD, unavailable=(IN_USE_BY_GROUP,))],
            [IN_USE_BY_GROUP],
            True,
            "deallocation of PodGroup ResourceClaim completed",
            False,
            [(Action.DEALLOCATE, "group-claim")],
            id="deallocate-podgroup-level-claim",
        ),
        pytest.param(
            [Tried(pod=POD, unavailable=(EXTENDED,), extended=EXTENDED)],
            [],
            False,
            "deallocation and deletion of ResourceClaims completed",
            False,
            [(Action.DELETE, "pod-extended-resources")],
            id="delete-pod-level-extended-claim",
        ),
        pytest.param(
            [Tried(pod=POD)],
            [IN_USE_BY_GROUP],
            True,
            "ResourceClaim unreserved for PodGroup",
            True,
            [(Action.UNRESERVE, "group-claim")],
            id="unreserve-podgroup-claim",
        ),
        pytest.param(
            [Tried(pod=POD), Tried(pod=POD2)],
            [IN_USE_BY_GROUP],
            True,
            "ResourceClaim unreserved for PodGroup",
            True,
            [(Action.UNRESERVE, "group-claim")],
            id="unreserve-podgroup-multiple-unscheduled-pods",
        ),
        pytest.param(
            [Tried(pod=POD), Tried(pod=POD_LEVEL, unavailable=(IN_USE_FOR_POD_LEVEL,))],
            [IN_USE_BY_GROUP],
            True,
            "ResourceClaim unreserved for PodGroup",
            True,
            [(Action.DEALLOCATE, "claim-2"), (Action.UNRESERVE, "group-claim")],
            id="mixed-pod-level-and-podgroup-claims",
        ),
        pytest.param(
            [Tried(pod=POD)],
            [IN_USE_BY_GROUP],
            False,
            "deallocation and deletion of ResourceClaims completed",
            False,
            [],
            id="skip-deallocate-feature-disabled",
        ),
    ],
)
def test_dynamic_resources_frees_what_upstream_frees(
    tried: list[Tried],
    group_claims: list[ResourceClaim],
    workload_claims: bool,
    want: str,
    final: bool,
    actions: list[tuple[Action, str]],
) -> None:
    status = dynamic_resources(
        _group(),
        tried,
        unscheduled=_pods(tried),
        scheduled=0,
        group_claims=group_claims,
        workload_claims=workload_claims,
    )
    assert status.reasons == (want,)
    assert status.final is final
    assert _actions(status) == actions


def test_group_claims_stay_while_a_member_is_scheduled() -> None:
    status = dynamic_resources(
        _group(),
        [Tried(pod=POD, unavailable=(IN_USE_BY_GROUP,))],
        unscheduled=[POD],
        scheduled=1,
        group_claims=[IN_USE_BY_GROUP],
        workload_claims=True,
    )
    assert status.reasons == ("deallocation and deletion of ResourceClaims completed",)
    assert status.actions == ()


def test_a_claim_reserved_for_another_pod_is_not_deallocated() -> None:
    other = _claim("group-claim", reserved_for=[("pods", "other", "other-uid")])
    status = dynamic_resources(
        _group(),
        [Tried(pod=POD, unavailable=(other,))],
        unscheduled=[POD],
        scheduled=0,
        group_claims=[],
        workload_claims=False,
    )
    assert status.actions == ()


@pytest.mark.parametrize(
    ("group", "pods", "priorities", "want", "final"),
    [
        pytest.param(
            _group(),
            [POD],
            [0, 0],
            "pod group preemption: No preemption victims found for incoming preemptor",
            True,
            id="no-lower-priority-pod",
        ),
        pytest.param(
            _group(priority=10),
            [_pod("pod", preemptionPolicy="Never")],
            [0],
            "pod group preemption: not eligible due to preemptionPolicy=Never.",
            False,
            id="preemption-policy-never",
        ),
        pytest.param(
            _group(priority=10),
            [POD],
            [0],
            "pod group preemption is not supported by dra-operator",
            False,
            id="victims-could-exist",
        ),
    ],
)
def test_pod_group_preemption_up_to_choosing_victims(
    group: PodGroup, pods: list[Pod], priorities: list[int], want: str, final: bool
) -> None:
    status = pod_group_preemption(group, pods, priorities)
    assert status.reasons == (want,)
    assert status.final is final


def test_an_unresolvable_status_ends_the_chain_and_keeps_earlier_writes() -> None:
    freed = dynamic_resources(
        _group(),
        [Tried(pod=POD, unavailable=(IN_USE,))],
        unscheduled=[POD],
        scheduled=0,
        group_claims=[],
        workload_claims=False,
    )
    result = chain(freed, pod_group_preemption(_group(), [POD], []))
    assert result.reasons == (
        "pod group preemption: No preemption victims found for incoming preemptor",
    )
    assert result.final and _actions(result) == [(Action.DEALLOCATE, "group-claim")]


def test_unschedulable_reasons_pile_up_after_the_cycle_text() -> None:
    never = [_pod("pod", preemptionPolicy="Never")]
    result = chain(
        dynamic_resources(
            _group(),
            [Tried(pod=POD)],
            unscheduled=[POD],
            scheduled=0,
            group_claims=[],
            workload_claims=False,
        ),
        pod_group_preemption(_group(), never, []),
    )
    assert group_message("minCount (2) cannot be satisfied: 1 scheduled, 0 remaining", result) == (
        "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, "
        "deallocation and deletion of ResourceClaims completed, "
        "pod group preemption: not eligible due to preemptionPolicy=Never."
    )
