"""The Pod fields the DRA controllers read: a stand-in until `model.Pod` lands.

TEMPORARY: the model helper is adding `model.Pod` and `model.Node` with parsers. These
dataclasses mirror the v1 Pod's nesting and field names so that switching is an import change;
delete this module then. They live here, not in a controller, because the cluster indexes
(pods by claim) read them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dra_operator.model import ObjectMeta


@dataclass(frozen=True, slots=True, kw_only=True)
class PodResourceClaim:
    """`pod.spec.resourceClaims[]`: exactly one of the two names is set in a valid pod."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodResourceClaimStatus:
    """`pod.status.resourceClaimStatuses[]`; `resource_claim_name` None: no claim needed."""

    name: str
    resource_claim_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSpec:
    node_name: str = ""
    scheduler_name: str = ""
    resource_claims: tuple[PodResourceClaim, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodStatus:
    phase: str = ""
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Pod:
    metadata: ObjectMeta
    spec: PodSpec = field(default_factory=PodSpec)
    status: PodStatus = field(default_factory=PodStatus)
