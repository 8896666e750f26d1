"""Which upstream DRA components run beside us, watched for as long as the operator runs.

kube-controller-manager and kube-scheduler run leader-elected in every kubeadm (kind) cluster,
each holding a Lease in kube-system while it works. The operator reads both Leases every
`period` seconds, and every `routing_period` whether the admission policies of
`deploy/components` (which send every pod with claims to our scheduler) are installed.

A Lease counts as held while its holder is set and its record changed within its duration,
measured on *our* clock from when we saw it change (the leader elector's rule, so clock skew
does not matter). A Lease seen for the first time therefore counts as held for one duration
even if its holder died long ago: the claims controller starts late rather than twice. A
holder that shuts down cleanly empties the holder, which counts as released at once.

What follows from the answer (which controllers run, what is unsafe) is the operator's call;
this module only observes. It does not watch other Lease names: `--upstream-lease` names them.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final

from dra_operator import errors, kube, names
from dra_operator.observability import LogEvent, get_logger

_log = get_logger(__name__)

_DEFAULT_DURATION: Final = 15.0  # seconds; client-go's default when a Lease names none

ROUTING_BINDINGS: Final = (
    (kube.MUTATING_POLICY_BINDINGS, names.ROUTE_CLAIMS_POLICY),
    (kube.VALIDATING_POLICY_BINDINGS, names.REQUIRE_SCHEDULER_POLICY),
)
"""Either binding keeps pods with claims away from other schedulers (docs/coexistence.md)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Upstream:
    """What runs beside us: `controller_manager` and `scheduler` hold their Leases;
    `routing`: a policy that sends every pod with claims to our scheduler is bound."""

    controller_manager: bool = False
    scheduler: bool = False
    routing: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class LeaseName:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class LeaseWatch:
    """Whether one Lease is held, by the rule in the module docstring."""

    def __init__(self) -> None:
        self._record: tuple[str, str, str] | None = None
        self._seen_at = 0.0

    def observe(self, lease: Mapping[str, Any] | None, now: float) -> bool:
        spec = (lease or {}).get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        if lease is None or not holder:
            self._record = None
            return False
        record = (
            holder,
            str(spec.get("renewTime") or ""),
            str((lease.get("metadata") or {}).get("resourceVersion") or ""),
        )
        if record != self._record:
            self._record, self._seen_at = record, now
        duration = float(spec.get("leaseDurationSeconds") or _DEFAULT_DURATION)
        return now <= self._seen_at + duration


class UpstreamWatch:
    """Polls the upstream Leases and the routing policies; see the module docstring."""

    def __init__(
        self,
        api: kube.Client,
        *,
        controller_manager: LeaseName,
        scheduler: LeaseName,
        period: float = 1.0,
        routing_period: float = 10.0,
    ) -> None:
        self._api = api
        self._leases = {
            "controller_manager": (controller_manager, LeaseWatch()),
            "scheduler": (scheduler, LeaseWatch()),
        }
        self._period = period
        self._routing_period = routing_period
        self._routing_checked = float("-inf")
        self.current = Upstream()
        self._failing: set[str] = set()

    async def poll(self) -> Upstream:
        """Read once (a failed read keeps the previous answer for that part) and return it."""
        now = asyncio.get_running_loop().time()
        held: dict[str, bool] = {}
        for field, (lease, watch) in self._leases.items():
            try:
                raw = await self._read(kube.LEASES, lease.name, lease.namespace)
            except errors.APIError as exc:
                self._failed(f"leases/{lease}", exc)
                held[field] = getattr(self.current, field)
                continue
            held[field] = watch.observe(raw, now)
        routing = self.current.routing
        if now - self._routing_checked >= self._routing_period:
            routing = await self._routing_bound()
            self._routing_checked = now
        self.current = Upstream(routing=routing, **held)
        return self.current

    async def run(self, on_change: Callable[[Upstream], None]) -> None:
        """Poll until cancelled, calling `on_change` with each answer that differs."""
        while True:
            await asyncio.sleep(self._period)
            before = self.current
            after = await self.poll()
            if after != before:
                on_change(after)

    async def _read(
        self, resource: kube.Resource, name: str, namespace: str | None = None
    ) -> Mapping[str, Any] | None:
        """The object, or None when it does not exist; other API errors raise."""
        try:
            answer = await self._api.get(
                resource, name, namespace=namespace, timeout=max(self._period * 5, 5.0)
            )
        except errors.APINotFoundError:
            answer = None
        self._failing.discard(f"{resource.plural}/{namespace or ''}/{name}")
        return answer

    async def _routing_bound(self) -> bool:
        """Whether a routing policy binding exists; unreadable counts as not (say it loudly)."""
        for resource, name in ROUTING_BINDINGS:
            try:
                if await self._read(resource, name) is not None:
                    return True
            except errors.APIError as exc:
                self._failed(f"{resource.plural}//{name}", exc)
        return False

    def _failed(self, what: str, exc: errors.APIError) -> None:
        if what not in self._failing:
            self._failing.add(what)
            _log.warning(LogEvent.UPSTREAM_READ_FAILED, object=what, error=str(exc))
