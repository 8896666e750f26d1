"""The eviction controller's reconcile: per-pod deadlines as queue timers, and rule status.

One work queue holds two kinds of key. A pod key computes the pod's eviction time from the
caches; a future time becomes a delayed add (`loop.call_at` inside the queue), so nothing
polls. Every cache change that may move the time re-adds the key at once, which cancels the
pending timer, and the reconcile sets a new one: the taint going away or the claim being
released cancels the eviction (with upstream's "Cancelling deletion" event). A due pod is
evicted as upstream's `maybeDeletePod` does: re-read from the server (UID must match, not
already terminating), event "Marking for deletion", the `DisruptionTarget` condition, then a
graceful DELETE preconditioned on the UID.

A rule key recomputes the rule's `EvictionInProgress` condition (see `_status.py`). The API is
reached only through `EvictionWriter`, the Protocol `_kube.py` implements.

Just before a due pod is evicted, the `before_evict` hooks (docs/hooks.md) may hold it: the key
is then reconciled again after the delay they ask for, which computes the eviction afresh (the
taint may be gone by then) and asks the hooks again.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple, Protocol

from dra_operator import names
from dra_operator.cluster import SLICES_BY_POOL, ObjectKey, PoolKey, Store, pod_claim_keys
from dra_operator.controllers import Result
from dra_operator.controllers.eviction._status import (
    RuleCounts,
    is_unchanged,
    rule_condition,
    status_apply_body,
    wait_before_update,
)
from dra_operator.controllers.eviction._taints import (
    NO_EXECUTE,
    Eviction,
    Reason,
    RuleTaint,
    claim_eviction,
    current_slices,
    pod_eviction,
    rule_matches,
    slice_taints,
)
from dra_operator.hooks import HookPoints
from dra_operator.model import (
    DeviceID,
    DeviceTaint,
    DeviceTaintRule,
    Pod,
    ResourceClaim,
    ResourceSlice,
)
from dra_operator.observability import LogEvent, get_logger

_log = get_logger("dra_operator.controllers.eviction")

MARKING_FOR_DELETION = "Marking for deletion"
CANCELLING_DELETION = "Cancelling deletion"
DISRUPTION_MESSAGE = "Device Taint manager: deleting due to NoExecute taint"
RULE_STATUS_DELAY = 10.0
"""Seconds after a pod change or an eviction before the rule's status is recomputed."""


class EvictionKey(NamedTuple):
    """A queue item: `pod` (namespace, name) or `rule` ("", name)."""

    kind: Literal["pod", "rule"]
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.namespace}/{self.name}" if self.namespace else self.name


class EvictionWriter(Protocol):
    """The API calls of the eviction controller; implementations raise `errors.APIError`."""

    async def get_pod(self, namespace: str, name: str) -> Pod | None:
        """GET the pod from the server, bypassing the cache; None when not found."""
        ...

    async def emit(self, pod: Pod, message: str) -> None:
        """Normal Event `DeviceTaintManagerEviction` about `pod`; never raises."""
        ...

    async def add_disruption_condition(self, pod: Pod, now: datetime.datetime) -> None:
        """Patch `pods/status` with the `DisruptionTarget` condition."""
        ...

    async def delete_pod(self, pod: Pod) -> bool:
        """Graceful DELETE with the pod's UID as precondition; False when already gone."""
        ...

    async def apply_rule_status(self, body: dict[str, Any]) -> None:
        """Server-side apply to `devicetaintrules/status`, forced, as the controller."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class Pending:
    uid: str
    eviction: Eviction


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class EvictionReconciler:
    """`reconcile(EvictionKey) -> Result` for `controllers.Controller`.

    `schedule(key, delay)` is the queue's `add_after` (rule status after an eviction);
    `on_evicted(seconds_after_due)` counts a deletion (`Metrics.pod_evicted`); `hooks` are
    asked (`before_evict`) before each eviction.
    """

    def __init__(
        self,
        *,
        pods: Store[Pod],
        claims: Store[ResourceClaim],
        slices: Store[ResourceSlice],
        rules: Store[DeviceTaintRule] | None,
        writer: EvictionWriter,
        schedule: Callable[[EvictionKey, float], None],
        rule_api_version: str = "",
        on_evicted: Callable[[float], None] | None = None,
        hooks: HookPoints | None = None,
        clock: Callable[[], datetime.datetime] = _utcnow,
    ) -> None:
        self._pods = pods
        self._claims = claims
        self._slices = slices
        self._rules = rules
        self._writer = writer
        self._schedule = schedule
        self._rule_api_version = rule_api_version
        self._on_evicted = on_evicted
        self._hooks = hooks
        self._clock = clock
        self.pending: dict[ObjectKey, Pending] = {}
        self.evicted_by_rule: collections.Counter[str] = collections.Counter()

    async def __call__(self, key: EvictionKey) -> Result:
        if key.kind == "pod":
            return await self._pod(ObjectKey(key.namespace, key.name))
        return await self._rule(key.name)

    # -- what the caches say ------------------------------------------------------------------

    def published(self, device: DeviceID) -> tuple[DeviceTaint, ...]:
        pool = self._slices.by_index(SLICES_BY_POOL, PoolKey(device.driver, device.pool))
        return slice_taints(entry.obj for entry in pool).get(device, ())

    def all_rules(self) -> list[DeviceTaintRule]:
        return [entry.obj for entry in self._rules] if self._rules is not None else []

    def claims_of(self, pod: Pod) -> list[ResourceClaim]:
        keys = pod_claim_keys(pod)
        extended = pod.status.extended_resource_claim_status
        if extended is not None:
            keys.append(ObjectKey(pod.metadata.namespace, extended.resource_claim_name))
        found = (self._claims.get(key) for key in keys)
        return [entry.obj for entry in found if entry is not None]

    def eviction_of(
        self, pod: Pod, rules: Iterable[DeviceTaintRule] | None = None
    ) -> Eviction | None:
        now = self._clock()
        chosen = self.all_rules() if rules is None else list(rules)
        return pod_eviction(
            pod,
            self.claims_of(pod),
            lambda claim: claim_eviction(claim, self.published, chosen, now),
        )

    # -- pods ---------------------------------------------------------------------------------

    async def _pod(self, key: ObjectKey) -> Result:
        entry = self._pods.get(key)
        pod = entry.obj if entry is not None else None
        if pod is None or pod.metadata.deletion_timestamp is not None:
            self.pending.pop(key, None)
            return Result()
        eviction = self.eviction_of(pod)
        previous = self.pending.get(key)
        if eviction is None:
            if previous is not None:
                del self.pending[key]
                if previous.uid == pod.metadata.uid:
                    _log.info(LogEvent.EVICTION_CANCELLED, pod=str(key))
                    await self._writer.emit(pod, CANCELLING_DELETION)
            return Result()
        if previous is None or previous.eviction != eviction:
            _log.info(
                LogEvent.EVICTION_SCHEDULED,
                pod=str(key),
                at=eviction.at.isoformat(),
                reasons=[_describe(r) for r in eviction.reasons],
            )
        self.pending[key] = Pending(pod.metadata.uid, eviction)
        # As upstream: a rule's status follows pod changes, but not at once (more may come).
        for rule in eviction.rules:
            self._schedule(EvictionKey("rule", "", rule.name), RULE_STATUS_DELAY)
        delay = (eviction.at - self._clock()).total_seconds()
        if delay > 0:
            return Result(requeue_after=delay)
        if self._hooks is not None:
            hold = await self._hooks.before_evict(pod, [_describe(r) for r in eviction.reasons])
            if hold > 0:
                return Result(requeue_after=hold)
        await self._evict(key, pod, eviction)
        return Result()

    async def _evict(self, key: ObjectKey, cached: Pod, eviction: Eviction) -> None:
        pod = await self._writer.get_pod(key.namespace, key.name)
        if (
            pod is None
            or pod.metadata.uid != cached.metadata.uid
            or pod.metadata.deletion_timestamp is not None
        ):
            self.pending.pop(key, None)
            return
        await self._writer.emit(pod, MARKING_FOR_DELETION)
        if not _has_disruption_condition(pod):
            await self._writer.add_disruption_condition(pod, self._clock())
        deleted = await self._writer.delete_pod(pod)
        self.pending.pop(key, None)
        if not deleted:
            return
        _log.info(
            LogEvent.POD_EVICTED, pod=str(key), reasons=[_describe(r) for r in eviction.reasons]
        )
        if self._on_evicted is not None:
            self._on_evicted(max((self._clock() - eviction.at).total_seconds(), 0.0))
        for rule in eviction.rules:
            self.evicted_by_rule[rule.uid] += 1
            self._schedule(EvictionKey("rule", "", rule.name), RULE_STATUS_DELAY)

    # -- rules --------------------------------------------------------------------------------

    async def _rule(self, name: str) -> Result:
        entry = self._rules.get(ObjectKey("", name)) if self._rules is not None else None
        if entry is None:
            return Result()
        rule = entry.obj
        now = self._clock()
        wait = wait_before_update(rule, now)
        if wait > 0:
            return Result(requeue_after=wait)
        condition = rule_condition(rule, self.count(rule))
        if not is_unchanged(rule, condition):
            body = status_apply_body(rule, condition, self._rule_api_version, now)
            await self._writer.apply_rule_status(body)
        return Result()

    def count(self, rule: DeviceTaintRule) -> RuleCounts:
        """Pending pods and namespaces (simulated as NoExecute for effect None), devices."""
        simulate = rule.taint.effect == "None"
        if rule.taint.effect != NO_EXECUTE and not simulate:
            return RuleCounts(evicted_pods=self.evicted_by_rule[rule.metadata.uid])
        rules = self.all_rules()
        if simulate:
            as_evicting = dataclasses.replace(
                rule, taint=dataclasses.replace(rule.taint, effect=NO_EXECUTE)
            )
            rules = [as_evicting if r.metadata.uid == rule.metadata.uid else r for r in rules]
        me = RuleTaint(rule.metadata.name, rule.metadata.uid)
        pods = 0
        namespaces: set[str] = set()
        for entry in self._pods:
            pod = entry.obj
            if pod.metadata.deletion_timestamp is not None:
                continue
            eviction = self.eviction_of(pod, rules)
            if eviction is not None and me in eviction.reasons:
                pods += 1
                namespaces.add(pod.metadata.namespace)
        published = allocated = 0
        if simulate:
            for s in current_slices(e.obj for e in self._slices):
                published += sum(
                    rule_matches(rule, DeviceID(s.driver, s.pool.name, d.name)) for d in s.devices
                )
            for claim_entry in self._claims:
                allocation = claim_entry.obj.status.allocation
                if allocation is None:
                    continue
                allocated += sum(
                    rule_matches(rule, DeviceID(r.driver, r.pool, r.device))
                    for r in allocation.devices.results
                )
        return RuleCounts(
            pending_pods=pods,
            pending_namespaces=len(namespaces),
            published_devices=published,
            allocated_devices=allocated,
            evicted_pods=self.evicted_by_rule[rule.metadata.uid],
        )


def _describe(reason: Reason) -> str:
    """A taint as `before_evict` hooks see it among the reasons of an eviction."""
    if isinstance(reason, RuleTaint):
        return f"DeviceTaintRule {reason.name}"
    return f"taint {reason.index} of device {reason.device}"


def _has_disruption_condition(pod: Pod) -> bool:
    return any(
        c.type == names.CONDITION_DISRUPTION_TARGET
        and c.status == "True"
        and c.reason == names.REASON_DELETION_BY_DEVICE_TAINT_MANAGER
        and c.message == DISRUPTION_MESSAGE
        for c in pod.status.conditions
    )
