"""A claim its PodGroup controls counts as the pod's (DRAWorkloadResourceClaims): upstream
v0.37.2's `IsForPod` with PodGroup owners, which the scheduler's PreFilter and the claims
controller both apply (the example driver's podgroup demo failed PreFilter without it)."""

from __future__ import annotations

from dra_operator.model import (
    Pod,
    ResourceClaim,
    is_for_pod_or_group,
    parse_pod,
    parse_resource_claim,
)

NS = "demo"


def _pod(group: str | None) -> Pod:
    spec: dict[str, object] = {"containers": [{"name": "c", "image": "x"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta = {"name": "group-1-0", "namespace": NS, "uid": "pod-uid"}
    return parse_pod({"metadata": meta, "spec": spec})


def _claim(kind: str, name: str, api_version: str, uid: str = "owner-uid") -> ResourceClaim:
    owner = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}
    meta = {"name": "group-1-gpu-x", "namespace": NS, "uid": "c", "ownerReferences": [owner]}
    return parse_resource_claim({"metadata": meta, "spec": {"devices": {"requests": []}}})


def test_a_claim_of_the_pods_group_is_for_the_pod() -> None:
    claim = _claim("PodGroup", "group-1", "scheduling.k8s.io/v1beta1")
    assert is_for_pod_or_group(_pod("group-1"), claim) is None


def test_a_claim_of_another_group_is_not() -> None:
    claim = _claim("PodGroup", "group-2", "scheduling.k8s.io/v1beta1")
    problem = is_for_pod_or_group(_pod("group-1"), claim)
    assert problem == (
        "ResourceClaim demo/group-1-gpu-x was not created for Pod demo/group-1-0 "
        "(neither Pod nor PodGroup group-1 is the owner)"
    )


def test_a_pod_outside_any_group_keeps_upstreams_text() -> None:
    claim = _claim("PodGroup", "group-1", "scheduling.k8s.io/v1beta1")
    problem = is_for_pod_or_group(_pod(None), claim)
    assert problem == (
        "ResourceClaim demo/group-1-gpu-x was not created for Pod demo/group-1-0 (Pod is not owner)"
    )


def test_the_pod_itself_still_owns_its_claim() -> None:
    claim = _claim("Pod", "group-1-0", "v1", uid="pod-uid")
    assert is_for_pod_or_group(_pod("group-1"), claim) is None
