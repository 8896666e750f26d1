"""core/v1 Pod and Node from raw JSON, keeping only what the control plane reads."""

from __future__ import annotations

from dra_operator.model._parse_common import (
    Raw,
    as_object,
    child,
    list_of,
    metadata,
    node_selector_term,
    opt_bool,
    opt_int,
    opt_node_selector,
    opt_object,
    opt_str,
    opt_timestamp,
    quantity_map,
    req_object,
    req_str,
    str_list,
    str_map,
    str_or_empty,
)
from dra_operator.model._parse_nodealloc import node_allocatable_claim_status
from dra_operator.model._parse_pod_scheduling import (
    pod_affinity_rules,
    topology_spread_constraints,
)
from dra_operator.model._parse_storage import volume
from dra_operator.model._pod import (
    Container,
    ContainerExtendedResourceRequest,
    ContainerImage,
    ContainerPort,
    ContainerResourceClaim,
    Node,
    Pod,
    PodCondition,
    PodExtendedResourceClaimStatus,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from dra_operator.model._pod_claims import deterministic_claim_name
from dra_operator.model._types import NodeSelector


def toleration(value: object, path: str) -> Toleration:
    raw = as_object(value, path)
    return Toleration(
        key=str_or_empty(raw, "key", path),
        operator=str_or_empty(raw, "operator", path),
        value=str_or_empty(raw, "value", path),
        effect=str_or_empty(raw, "effect", path),
        toleration_seconds=opt_int(raw, "tolerationSeconds", path),
    )


def taint(value: object, path: str) -> Taint:
    raw = as_object(value, path)
    return Taint(
        key=req_str(raw, "key", path),
        value=str_or_empty(raw, "value", path),
        effect=req_str(raw, "effect", path),
        time_added=opt_timestamp(raw, "timeAdded", path),
    )


def _container_claim(value: object, path: str) -> ContainerResourceClaim:
    raw = as_object(value, path)
    return ContainerResourceClaim(
        name=req_str(raw, "name", path), request=str_or_empty(raw, "request", path)
    )


def _container_port(value: object, path: str) -> ContainerPort:
    raw = as_object(value, path)
    return ContainerPort(
        container_port=opt_int(raw, "containerPort", path) or 0,
        host_port=opt_int(raw, "hostPort", path) or 0,
        host_ip=str_or_empty(raw, "hostIP", path),
        protocol=opt_str(raw, "protocol", path) or "TCP",
    )


def _container(value: object, path: str) -> Container:
    raw = as_object(value, path)
    resources = opt_object(raw, "resources", path) or {}
    p = child(path, "resources")
    return Container(
        name=req_str(raw, "name", path),
        image=str_or_empty(raw, "image", path),
        ports=list_of(raw, "ports", path, _container_port),
        requests=quantity_map(resources, "requests", p),
        limits=quantity_map(resources, "limits", p),
        claims=list_of(resources, "claims", p, _container_claim),
        restart_policy=opt_str(raw, "restartPolicy", path),
    )


def _pod_claim(value: object, path: str) -> PodResourceClaim:
    """1.31+ names the claim or template inline; 1.26-1.30 under `source` (same field names)."""
    raw = as_object(value, path)
    source = opt_object(raw, "source", path)
    claim = raw if source is None else source
    where = path if source is None else child(path, "source")
    return PodResourceClaim(
        name=req_str(raw, "name", path),
        resource_claim_name=opt_str(claim, "resourceClaimName", where),
        resource_claim_template_name=opt_str(claim, "resourceClaimTemplateName", where),
    )


def _preferred_term(value: object, path: str) -> PreferredSchedulingTerm:
    raw = as_object(value, path)
    weight = opt_int(raw, "weight", path)
    preference = node_selector_term(req_object(raw, "preference", path), child(path, "preference"))
    return PreferredSchedulingTerm(weight=0 if weight is None else weight, preference=preference)


def parse_node_affinity(
    raw: Raw, path: str
) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    """A core/v1 NodeAffinity: its required selector (None when unset) and preferred terms.

    Read from a pod's `spec.affinity.nodeAffinity` and from NodeAffinity's `addedAffinity` arg.
    """
    required = opt_node_selector(raw, "requiredDuringSchedulingIgnoredDuringExecution", path)
    preferred = list_of(
        raw, "preferredDuringSchedulingIgnoredDuringExecution", path, _preferred_term
    )
    return required, preferred


def _scheduling_gate(value: object, path: str) -> str:
    return req_str(as_object(value, path), "name", path)


def _pod_spec(spec: Raw) -> PodSpec:
    resources = opt_object(spec, "resources", "spec") or {}
    affinity = opt_object(spec, "affinity", "spec") or {}
    node_affinity = opt_object(affinity, "nodeAffinity", "spec.affinity") or {}
    required, preferred = parse_node_affinity(node_affinity, "spec.affinity.nodeAffinity")
    group = opt_object(spec, "schedulingGroup", "spec") or {}
    return PodSpec(
        node_name=str_or_empty(spec, "nodeName", "spec"),
        scheduler_name=str_or_empty(spec, "schedulerName", "spec"),
        priority=opt_int(spec, "priority", "spec"),
        resource_claims=list_of(spec, "resourceClaims", "spec", _pod_claim),
        containers=list_of(spec, "containers", "spec", _container),
        init_containers=list_of(spec, "initContainers", "spec", _container),
        tolerations=list_of(spec, "tolerations", "spec", toleration),
        node_selector=str_map(spec, "nodeSelector", "spec"),
        required_node_affinity=required,
        preferred_node_affinity=preferred,
        scheduling_gates=list_of(spec, "schedulingGates", "spec", _scheduling_gate),
        preemption_policy=str_or_empty(spec, "preemptionPolicy", "spec"),
        overhead=quantity_map(spec, "overhead", "spec"),
        resource_requests=quantity_map(resources, "requests", "spec.resources"),
        volumes=list_of(spec, "volumes", "spec", volume),
        pod_affinity=pod_affinity_rules(spec),
        topology_spread_constraints=topology_spread_constraints(spec),
        pod_group_name=opt_str(group, "podGroupName", "spec.schedulingGroup"),
    )


def _claim_status(value: object, path: str) -> PodResourceClaimStatus:
    raw = as_object(value, path)
    return PodResourceClaimStatus(
        name=req_str(raw, "name", path),
        resource_claim_name=opt_str(raw, "resourceClaimName", path),
    )


def _request_mapping(value: object, path: str) -> ContainerExtendedResourceRequest:
    raw = as_object(value, path)
    return ContainerExtendedResourceRequest(
        container_name=req_str(raw, "containerName", path),
        resource_name=req_str(raw, "resourceName", path),
        request_name=req_str(raw, "requestName", path),
    )


def _extended_status(raw: Raw | None, path: str) -> PodExtendedResourceClaimStatus | None:
    if raw is None:
        return None
    return PodExtendedResourceClaimStatus(
        request_mappings=list_of(raw, "requestMappings", path, _request_mapping),
        resource_claim_name=req_str(raw, "resourceClaimName", path),
    )


def _condition(value: object, path: str) -> PodCondition:
    raw = as_object(value, path)
    return PodCondition(
        type=req_str(raw, "type", path),
        status=req_str(raw, "status", path),
        reason=str_or_empty(raw, "reason", path),
        message=str_or_empty(raw, "message", path),
        last_transition_time=opt_timestamp(raw, "lastTransitionTime", path),
    )


def parse_pod(
    raw: Raw, *, spec: PodSpec | None = None, deterministic_claim_names: bool = False
) -> Pod:
    """A core/v1 Pod (spec is required, status optional).

    `spec` is an earlier version's, parsed from a raw spec equal to this one's: most watch
    events of a pod change only its metadata or status, and the spec is most of the parse.
    `deterministic_claim_names`: the pod comes from a release before 1.28, whose pods name no
    generated claims; each template entry's status is made up from its deterministic name, so
    that every reader finds the claim as on newer releases (`ClaimNaming.DETERMINISTIC`).
    """
    status = opt_object(raw, "status", "") or {}
    meta = metadata(raw)
    pod_spec = spec if spec is not None else _pod_spec(req_object(raw, "spec", ""))
    return Pod(
        metadata=meta,
        spec=pod_spec,
        status=PodStatus(
            phase=str_or_empty(status, "phase", "status"),
            resource_claim_statuses=_deterministic_statuses(meta.name, pod_spec)
            if deterministic_claim_names
            else list_of(status, "resourceClaimStatuses", "status", _claim_status),
            extended_resource_claim_status=_extended_status(
                opt_object(status, "extendedResourceClaimStatus", "status"),
                "status.extendedResourceClaimStatus",
            ),
            conditions=list_of(status, "conditions", "status", _condition),
            nominated_node_name=str_or_empty(status, "nominatedNodeName", "status"),
            start_time=opt_timestamp(status, "startTime", "status"),
            node_allocatable_resource_claim_statuses=list_of(
                status,
                "nodeAllocatableResourceClaimStatuses",
                "status",
                node_allocatable_claim_status,
            ),
        ),
    )


def _deterministic_statuses(pod_name: str, spec: PodSpec) -> tuple[PodResourceClaimStatus, ...]:
    return tuple(
        PodResourceClaimStatus(
            name=entry.name, resource_claim_name=deterministic_claim_name(pod_name, entry.name)
        )
        for entry in spec.resource_claims
        if entry.resource_claim_template_name is not None
    )


def _image(value: object, path: str) -> ContainerImage:
    raw = as_object(value, path)
    return ContainerImage(
        names=str_list(raw, "names", path), size_bytes=opt_int(raw, "sizeBytes", path) or 0
    )


def parse_node(raw: Raw) -> Node:
    """A core/v1 Node: labels (in metadata), taints, allocatable, readiness and images."""
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    conditions = list_of(status, "conditions", "status", _condition)
    return Node(
        metadata=metadata(raw),
        unschedulable=bool(opt_bool(spec, "unschedulable", "spec")),
        taints=list_of(spec, "taints", "spec", taint),
        allocatable=quantity_map(status, "allocatable", "status"),
        ready=any(c.type == "Ready" and c.status == "True" for c in conditions),
        declared_features=str_list(status, "declaredFeatures", "status"),
        images=list_of(status, "images", "status", _image),
    )
