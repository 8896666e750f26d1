"""Metrics computed when scraped, from callbacks over state the operator already keeps.

A gauge that counts objects in a cache would otherwise have to be kept in step with every
watch event; reading the cache at scrape time, as kube-controller-manager's resourceclaim
collector reads its lister, cannot drift. The callbacks run in the scraping thread, which is
the event loop (the probes server runs there), so they may read the caches directly.

A callback that raises loses its own samples for that scrape, is logged, and never breaks the
rest of the page.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import GaugeMetricFamily

from dra_operator import names
from dra_operator.model import ResourceClaim
from dra_operator.observability._health import Health
from dra_operator.observability._labels import bool_label
from dra_operator.observability._logging import LogEvent, get_logger

_log = get_logger(__name__)

ClaimsSource = Callable[[], Iterable[ResourceClaim]]
SizeSource = Callable[[], int]


class ClaimSource(enum.Enum):
    """Where a claim came from: the `source` label of the resource_claims gauges."""

    USER = ""
    TEMPLATE = "resource_claim_template"
    EXTENDED_RESOURCE = "extended_resource"


def claim_source(claim: ResourceClaim) -> ClaimSource:
    """Upstream's rule: the extended-resource annotation first, then the pod-claim-name one."""
    annotations = claim.metadata.annotations
    if annotations.get(names.EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
        return ClaimSource.EXTENDED_RESOURCE
    if annotations.get(names.POD_CLAIM_NAME_ANNOTATION, ""):
        return ClaimSource.TEMPLATE
    return ClaimSource.USER


def has_admin_access(claim: ResourceClaim) -> bool:
    """True if a request asks for admin access; subrequests cannot, as upstream counts it."""
    return any(
        request.exactly is not None and bool(request.exactly.admin_access)
        for request in claim.spec.requests
    )


class ResourceClaims:
    """`dynamic_resource_allocation_resource_claims{allocated,admin_access,source}` (1.37's
    name) and the same numbers under 1.36's `resourceclaim_controller_resource_claims`."""

    NAME = "dynamic_resource_allocation_resource_claims"
    NAME_136 = "resourceclaim_controller_resource_claims"
    LABELS = ("allocated", "admin_access", "source")

    def __init__(self) -> None:
        self.source: ClaimsSource | None = None

    def describe(self) -> list[GaugeMetricFamily]:
        return [self._family(self.NAME), self._family(self.NAME_136)]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = [self._family(self.NAME), self._family(self.NAME_136)]
        if self.source is not None:
            try:
                tally = Counter(
                    (
                        bool_label(claim.status.allocation is not None),
                        bool_label(has_admin_access(claim)),
                        claim_source(claim).value,
                    )
                    for claim in self.source()
                )
            except Exception:
                _log.exception(LogEvent.METRICS_SOURCE_FAILED, metric=self.NAME)
            else:
                for labels, count in sorted(tally.items()):
                    for family in families:
                        family.add_metric(labels, count)
        yield from families

    def _family(self, name: str) -> GaugeMetricFamily:
        return GaugeMetricFamily(
            name,
            "Number of ResourceClaims, categorized by allocation status, admin access, and "
            "source. Source can be 'resource_claim_template' (created from a template), "
            "'extended_resource' (extended resources), or empty (manually created by a user).",
            labels=self.LABELS,
        )


class CacheSizes:
    """`dra_operator_cache_objects{kind}`: objects held by each watch cache."""

    NAME = "dra_operator_cache_objects"

    def __init__(self) -> None:
        self.sources: dict[str, SizeSource] = {}

    def describe(self) -> list[GaugeMetricFamily]:
        return [self._family()]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = self._family()
        for kind, size in sorted(self.sources.items()):
            try:
                family.add_metric((kind,), size())
            except Exception:
                _log.exception(LogEvent.METRICS_SOURCE_FAILED, metric=self.NAME, kind=kind)
        yield family

    def _family(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(
            self.NAME, "Objects held in the operator's watch cache, by kind.", labels=("kind",)
        )


class LeaderStatus:
    """`dra_operator_leader_status`: 1 while this replica leads, read from `Health`."""

    NAME = "dra_operator_leader_status"

    def __init__(self, health: Health | None) -> None:
        self.health = health

    def describe(self) -> list[GaugeMetricFamily]:
        return [self._family()]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = self._family()
        family.add_metric((), 1.0 if self.health is not None and self.health.is_leader else 0.0)
        yield family

    def _family(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(
            self.NAME, "1 while this replica holds the leader lease, 0 otherwise.", labels=()
        )
