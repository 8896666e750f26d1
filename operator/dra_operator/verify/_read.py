"""Reading the cluster for the checks: the only I/O of this package.

Lists claims and slices in the newest `resource.k8s.io` version the server serves (and the
model reads; a v1alpha2-only server's claims, and 1.30's named-resources slices and claims as
they are, for `check_named`), pods and nodes in core/v1, page by page, and parses them into
the model. For
`explain`, also DeviceTaintRules in the newest version serving them (1.36 serves them in
v1beta2 and v1alpha3 only).
"""

from __future__ import annotations

import asyncio
import datetime
import re
from collections.abc import Callable
from typing import TypeVar

from dra_operator import names
from dra_operator.errors import APIError, APINotFoundError, InvalidObjectError
from dra_operator.kube import (
    LEASES,
    MUTATING_POLICY_BINDINGS,
    NODES,
    PODS,
    RESOURCE_GROUP,
    VALIDATING_POLICY_BINDINGS,
    Client,
    JSONObject,
    Resource,
    dra,
    list_all,
    release_minor,
)
from dra_operator.model import (
    ClaimNaming,
    DeviceClass,
    DeviceTaintRule,
    PodGroup,
    parse_device_class,
    parse_device_taint_rule,
    parse_node,
    parse_pod,
    parse_pod_group,
    parse_resource_claim,
    parse_resource_slice,
    v1alpha2,
)
from dra_operator.verify._state import ClusterState, Schedulers

__all__ = ["newest_version", "read_cluster"]

T = TypeVar("T")

_MODEL_VERSIONS = frozenset({"v1", "v1beta2", "v1beta1", "v1alpha3"})
_CLASSIC = "v1alpha2"  # claims and classes read through the model's translation
_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STAGE = {"alpha": 0, "beta": 1, None: 2}


def newest_version(served: list[str]) -> str | None:
    """The newest of `served` that the model can read: GA over beta over alpha, then numbers."""

    def rank(version: str) -> tuple[int, int, int]:
        match = _VERSION.fullmatch(version)
        assert match is not None  # every model version matches
        major, stage, minor = match.groups()
        return int(major), _STAGE[stage], int(minor or 0)

    readable = [v for v in served if v in _MODEL_VERSIONS]
    return max(readable, key=rank) if readable else None


async def read_cluster(
    api: Client, *, namespace: str | None = None, with_classes: bool = False
) -> ClusterState:
    """A snapshot of claims, slices, pods and nodes; raises APIError or InvalidObjectError.

    With `namespace`, only that namespace's claims and pods are read (slices and nodes are
    cluster-scoped and always read whole). `with_classes` adds the DeviceClasses and the
    DeviceTaintRules, which the checks do not need but `explain` (running the allocator on the
    snapshot as the scheduler sees it) does.
    """
    served = await api.served_versions(RESOURCE_GROUP)
    version = newest_version(served)
    if version is None and _CLASSIC in served:
        version = _CLASSIC  # 1.27-1.30: claims only (1.30's named resources: verify._named)
    if version is None:
        raise APINotFoundError(
            404, "NotFound", f"the server serves no version of {RESOURCE_GROUP} this tool reads"
        )
    deterministic = False  # `ClaimNaming.DETERMINISTIC`: only a v1alpha2 server can be so old
    if version == _CLASSIC:
        _, minor = release_minor(await api.server_version())
        deterministic = ClaimNaming.for_minor(minor) is ClaimNaming.DETERMINISTIC
    claims, slices, pods, nodes, schedulers = await asyncio.gather(
        _list(
            api,
            dra("resourceclaims", version),
            lambda raw: parse_resource_claim(raw, version),
            namespace,
        ),
        _list(api, dra("resourceslices", version), lambda raw: parse_resource_slice(raw, version))
        if version != _CLASSIC
        else _nothing(),
        _list(
            api,
            PODS,
            lambda raw: parse_pod(raw, deterministic_claim_names=deterministic),
            namespace,
        ),
        _list(api, NODES, parse_node),
        read_schedulers(api),
    )
    classes: tuple[DeviceClass, ...] = ()
    rules: tuple[DeviceTaintRule, ...] = ()
    if with_classes:
        classes = await _list(
            api, dra("deviceclasses", version), lambda raw: parse_device_class(raw, version)
        )
        rules_version = await _serving(api, "devicetaintrules", served)
        if rules_version is not None:
            found = rules_version
            rules = await _list(
                api,
                dra("devicetaintrules", found),
                lambda raw: parse_device_taint_rule(raw, found),
            )
    named_claims: tuple[v1alpha2.ResourceClaim, ...] = ()
    named_slices: tuple[v1alpha2.ResourceSlice, ...] = ()
    if version == _CLASSIC:
        named_claims = await _list(
            api, dra("resourceclaims", version), v1alpha2.parse_resource_claim, namespace
        )
        if any(
            r.get("name") == "resourceslices"
            for r in await api.api_resources(RESOURCE_GROUP, version)
        ):  # 1.30; 1.27-1.29 serve none
            named_slices = await _list(
                api, dra("resourceslices", version), v1alpha2.parse_resource_slice
            )
    pod_groups: tuple[PodGroup, ...] | None = None
    group_versions = await api.served_versions(PodGroup.API_GROUP)
    group_version = next((v for v in PodGroup.VERSIONS if v in group_versions), None)
    if group_version is not None:
        found_version = group_version
        pod_groups = await _list(
            api,
            Resource(PodGroup.API_GROUP, found_version, PodGroup.PLURAL, namespaced=True),
            lambda raw: parse_pod_group(raw, found_version),
            namespace,
        )
    return ClusterState(
        pod_groups=pod_groups,
        named_claims=named_claims,
        named_slices=named_slices,
        claims=claims,
        slices=slices,
        pods=pods,
        nodes=nodes,
        classes=classes,
        rules=rules,
        schedulers=schedulers,
    )


KUBE_SCHEDULER_LEASE = ("kube-system", "kube-scheduler")


async def read_schedulers(api: Client) -> Schedulers | None:
    """Whether kube-scheduler holds its Lease (by its renewTime and duration against our clock,
    good enough for a report) and a routing policy is bound; None when unreadable."""
    namespace, name = KUBE_SCHEDULER_LEASE
    try:
        lease = await api.find(LEASES, name, namespace=namespace)
        bindings = [
            await api.find(MUTATING_POLICY_BINDINGS, names.ROUTE_CLAIMS_POLICY),
            await api.find(VALIDATING_POLICY_BINDINGS, names.REQUIRE_SCHEDULER_POLICY),
        ]
    except APIError:
        return None
    held = lease is not None and _is_held(lease, datetime.datetime.now(datetime.UTC))
    return Schedulers(
        kube_scheduler=f"{namespace}/{name}" if held else None,
        routing=any(binding is not None for binding in bindings),
    )


def _is_held(lease: JSONObject, now: datetime.datetime) -> bool:
    spec = lease.get("spec") or {}
    renewed = str(spec.get("renewTime") or "")
    if not spec.get("holderIdentity") or not renewed:
        return False
    renew_time = datetime.datetime.fromisoformat(renewed.replace("Z", "+00:00"))
    duration = datetime.timedelta(seconds=float(spec.get("leaseDurationSeconds") or 15))
    return now <= renew_time + duration


async def _nothing() -> tuple[()]:
    return ()


async def _serving(api: Client, plural: str, served: list[str]) -> str | None:
    """The newest version of `resource.k8s.io` that serves `plural` (None: not served)."""
    versions = [v for v in served if v in _MODEL_VERSIONS]
    while versions:
        candidate = newest_version(versions)
        assert candidate is not None
        resources = await api.api_resources(RESOURCE_GROUP, candidate)
        if any(r.get("name") == plural for r in resources):
            return candidate
        versions.remove(candidate)
    return None


async def _list(
    api: Client,
    resource: Resource,
    parse: Callable[[JSONObject], T],
    namespace: str | None = None,
) -> tuple[T, ...]:
    items: list[T] = []
    for raw in (await list_all(api, resource, namespace=namespace)).items:
        meta = raw.get("metadata") or {}
        where = "/".join(part for part in (meta.get("namespace"), meta.get("name")) if part)
        try:
            items.append(parse(raw))
        except InvalidObjectError as exc:
            raise exc.at(f"{resource.plural} {where}") from exc
    return tuple(items)
