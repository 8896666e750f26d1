"""ResourcePoolStatusRequest (resource.k8s.io/v1alpha3, KEP-5677, gate DRAResourcePoolStatus).

A user asks once for the state of a driver's pools; the controller answers by writing the
status, after which the whole object is immutable (k8s.io/api v0.37.2, resource/v1alpha3).
Only what the controller reads is kept: the filters, whether a status is set, and the
conditions' transition times (the clean-up's clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dra_operator.model._parse_common import (
    Raw,
    check_version,
    condition,
    list_of,
    metadata,
    opt_int,
    opt_object,
    opt_str,
    req_object,
    req_str,
)
from dra_operator.model._types import Condition, ObjectMeta

LIMIT_DEFAULT: Final = 100
"""`spec.limit` when unset (`ResourcePoolStatusRequestLimitDefault`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourcePoolStatusRequest:
    """One request; `answered` when `status` is set (upstream: complete, never reprocessed)."""

    metadata: ObjectMeta
    driver: str
    pool_name: str | None = None
    limit: int = LIMIT_DEFAULT
    default_partition_type_attribute: str | None = None
    answered: bool = False
    conditions: tuple[Condition, ...] = ()


def parse_resource_pool_status_request(
    raw: Raw, version: str = "v1alpha3"
) -> ResourcePoolStatusRequest:
    """A ResourcePoolStatusRequest; only v1alpha3 serves the kind (1.36, 1.37)."""
    check_version(version)
    spec = req_object(raw, "spec", "")
    status = opt_object(raw, "status", "")
    limit = opt_int(spec, "limit", "spec")
    return ResourcePoolStatusRequest(
        metadata=metadata(raw),
        driver=req_str(spec, "driver", "spec"),
        pool_name=opt_str(spec, "poolName", "spec"),
        limit=LIMIT_DEFAULT if limit is None else limit,
        default_partition_type_attribute=opt_str(spec, "defaultPartitionTypeAttribute", "spec"),
        answered=status is not None,
        conditions=list_of(status or {}, "conditions", "status", condition),
    )
