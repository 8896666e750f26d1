"""The scheduler controller: decide serially, write concurrently (rule 8).

One worker takes keys from the queue and decides, one decision at a time, against the ledger
with every in-flight allocation in it; a placement is reserved in the ledger (and the pod in the
node infos) before the next decision starts, so two decisions never see the same free device or
the same free CPU. Its writes then run as a task of their own, concurrently with later decisions:

0. the framework's PreBind (VolumeBinding's PV and PVC writes), after its Reserve and Permit
   ran with the decision; a failure of any step below runs its Unreserve;
1. per claim to allocate: add the finalizer (Update, conditional on the version decided on), then
   `status.allocation` + `reservedFor` (UpdateStatus, on the version the first write returned);
   per allocated claim: `reservedFor` only;
2. bind the pod (`pods/binding`), and record a `Scheduled` event.

Each successful claim write goes into the claim store (`assume`) and the ledger (`observe`,
`written`), so the allocation never disappears while the watch catches up. A write that fails
rolls back every allocation of the placement not written yet and forgets the pod's node, except
that a write which got no answer (it may have landed) stays in flight until read back. A 409
re-reads the claim from the server into the store, then the key is decided again; any other
failure is reported as `FailedScheduling` and retried with backoff. A bind that cannot succeed
(the pod is gone, or any 4xx but 409 and 429) is followed by upstream's Unreserve: the pod leaves
the `reservedFor` of every claim of the placement, and a claim left without consumers is
deallocated, so its devices do not stay held for a pod that will never run there. A decision
that finds no node emits `FailedScheduling` with the explanation and parks the key until a
relevant change.

Metrics (`Settings.metrics`): every allocator call (DynamicResources' Filter), the seconds from
a pod's creation to its binding, and the scheduler queue; failed writes are counted by the
writer.

Before deciding, the `Governor` picks the AllocationPolicy and hooks for the claims to allocate
(`_policies.py`); their `before_allocate` hooks may refuse, which is reported and parked like an
unschedulable pod. `after_allocate` hooks are awaited once the placement's writes are done.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import time
from collections.abc import Mapping
from typing import Any, Protocol

from dra_operator import errors, names
from dra_operator.cluster import PODS_BY_CLAIM, Change, ObjectKey
from dra_operator.controllers import Controller, Observer, Result, WorkQueue
from dra_operator.controllers.scheduler._classic import PublishContext, RequestDeallocation
from dra_operator.controllers.scheduler._decide import (
    decide_claim,
    decide_pod,
    handles,
)
from dra_operator.controllers.scheduler._decision import (
    ClaimWrite,
    Decision,
    Placement,
    Unschedulable,
    Wait,
)
from dra_operator.controllers.scheduler._decision_log import log_decision, log_refusal
from dra_operator.controllers.scheduler._events import (
    WorkKey,
    frees_room,
    keys_for_claim,
    keys_for_pod,
    pod_key,
    queue_priority,
    releases_devices,
)
from dra_operator.controllers.scheduler._extended import (
    ExtendedWrite,
    owner_of_deleted,
    pod_status_patch,
)
from dra_operator.controllers.scheduler._nodealloc_fit import status_patch
from dra_operator.controllers.scheduler._policies import Choice, Governor
from dra_operator.controllers.scheduler._preemptor import Preemptor
from dra_operator.controllers.scheduler._state import (
    Settings,
    State,
)
from dra_operator.controllers.scheduler._writes import (
    Event,
    binding_body,
    deallocation_body,
    finalizer_body,
    has_finalizer,
    is_allocated,
    is_reserved_for,
    status_body,
    unreserve_body,
    without_finalizer_body,
)
from dra_operator.controllers.scheduler.gang import Gangs
from dra_operator.controllers.scheduler.plugins import dynamicresources
from dra_operator.controllers.scheduler.plugins.dynamicresources import claims_to_allocate
from dra_operator.hooks import HookPoints
from dra_operator.model import (
    AllocationResult,
    DeviceClass,
    DeviceTaintRule,
    Node,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    ResourceSlice,
    context_manifest,
    render_scheduling_spec,
)
from dra_operator.observability import LogEvent, get_logger

_log = get_logger(__name__)

_UNRESERVE_ATTEMPTS = 3
_SETTLE_FIRST_DELAY = 0.25
_SETTLE_MAX_DELAY = 8.0
"""Writes of one claim's Unreserve, each after re-reading the claim on a 409; then it is left
to the claims controller (the pod gone) or the next attempt to bind."""


class SchedulerWriter(Protocol):
    """The API calls of the scheduler; implementations raise `errors.APIError`."""

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """PUT a ResourceClaim; the body's resourceVersion is the precondition."""
        ...

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """PUT `resourceclaims/status`; the body's resourceVersion is the precondition."""
        ...

    async def get_claim(self, key: ObjectKey) -> Mapping[str, Any] | None:
        """GET a claim from the server, bypassing the cache; None when not found."""
        ...

    async def bind(self, body: Mapping[str, Any]) -> None:
        """POST `pods/binding`."""
        ...

    async def create_claim(self, claim: ResourceClaim) -> Mapping[str, Any]:
        """POST the special claim for extended resources (`_extended.create_body`)."""
        ...

    async def delete_claim(self, key: ObjectKey, uid: str) -> None:
        """DELETE a claim, only while it still has `uid`; gone already is no error."""
        ...

    async def patch_pod_status(self, pod: ObjectKey, patch: Mapping[str, Any]) -> None:
        """Patch `pods/status` (strategic merge, as kube-scheduler)."""
        ...

    async def emit(self, event: Event) -> None:
        """Record an Event; never raises."""
        ...


class ContextWriter(Protocol):
    """The PodSchedulingContext writes of classic DRA (docs/classic.md)."""

    async def get_context(self, key: ObjectKey) -> Mapping[str, Any] | None:
        """The context as the server has it; None when there is none."""

    async def create_context(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """Create; the server's answer."""

    async def update_context(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """Update (resourceVersion precondition); the server's answer."""

    async def delete_context(self, key: ObjectKey, uid: str) -> None:
        """Delete the context with `uid`; gone already is fine."""


class Scheduler:
    """The controller: event entry points, the serial decision, the concurrent writes."""

    def __init__(
        self,
        state: State,
        settings: Settings,
        writer: SchedulerWriter,
        *,
        scheduler_names: frozenset[str] = frozenset({names.DEFAULT_SCHEDULER_NAME}),
        observe: Observer[WorkKey] | None = None,
        governor: Governor | None = None,
        contexts: ContextWriter | None = None,
        preemptor: Preemptor | None = None,
        gangs: Gangs | None = None,
    ) -> None:
        self.state = state
        self.preemptor = preemptor  # None: PostFilter does not run
        self.gangs = gangs  # PodGroups served: their gangs are placed whole (gang/)
        self._contexts = contexts
        self.settings = settings
        self.governor = governor if governor is not None else Governor()
        self.scheduler_names = scheduler_names
        self._writer = writer
        metrics = settings.metrics
        self.controller: Controller[WorkKey] = Controller(
            names.SCHEDULER_QUEUE,
            self.reconcile,
            workers=1,
            observe=observe,
            queue=WorkQueue(  # PrioritySort: higher priority first, then the time it got ready
                metrics=metrics.workqueue(names.SCHEDULER_QUEUE) if metrics is not None else None,
                priority=lambda key: queue_priority(state.pods, key),
            ),
        )
        self.unschedulable: set[WorkKey] = set()
        self._writing: set[WorkKey] = set()
        self._again: set[WorkKey] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._settling: set[asyncio.Task[None]] = set()
        self.conflicts = 0  # writes that met a 409 and were decided again

    # -- watch changes (called after the stores and the ledger took them) -----------------------

    def pod_changed(self, change: Change[Pod]) -> None:
        if self.preemptor is not None:
            self.preemptor.pod_changed(
                change.old.obj if change.old is not None else None,
                change.new.obj if change.new is not None else None,
            )
        if change.new is not None:
            self.state.node_infos.pod_changed(change.new.obj)
        elif change.old is not None:
            self.state.node_infos.forget(change.old.obj.metadata.uid)
            self.unschedulable.discard(pod_key(change.old.obj))
            self._forget_context(change.old.obj)
        for key in keys_for_pod(change, self.scheduler_names, self.state.claims):
            self.controller.enqueue(key)
        if frees_room(change):
            self._wake_unschedulable()

    def claim_changed(self, change: Change[ResourceClaim]) -> None:
        for key in keys_for_claim(change, self.state.pods, self.scheduler_names):
            self.controller.enqueue(key)
        owner = owner_of_deleted(change)
        if owner is not None:  # a pod parked on its stale special claim may fit now
            key = WorkKey("pod", owner.namespace, owner.name)
            if key in self.unschedulable:
                self.controller.enqueue(key)
        if releases_devices(change):
            self._wake_unschedulable()

    def context_changed(self, change: Change[PodSchedulingContext]) -> None:
        """A driver answered: the pod named like the context is decided again.

        As upstream's queueing hint: a deletion or a change of `spec` only (our own writes)
        queues nothing.
        """
        old = change.old.obj if change.old is not None else None
        new = change.new.obj if change.new is not None else None
        if new is None or (old is not None and old.resource_claims == new.resource_claims):
            return
        if old is None and not new.resource_claims:
            return
        meta = new.metadata
        pod = self.state.pods.get(ObjectKey(meta.namespace, meta.name))
        if pod is not None and handles(pod.obj, self.scheduler_names):
            self.controller.enqueue(pod_key(pod.obj))

    def slice_changed(self, change: Change[ResourceSlice]) -> None:
        self.state.tainted.slice_changed(change)
        self._wake_unschedulable()

    def rule_changed(self, change: Change[DeviceTaintRule]) -> None:
        """A DeviceTaintRule changed: the slices' taints are derived again on the next decision.

        Only a rule changed or removed can make a device usable, so only then are the parked
        keys decided again (upstream's tracker re-emits the slices whose taints a rule changed,
        and kube-scheduler moves unschedulable pods on slice updates).
        """
        if not self.state.tainted.enabled:
            return
        self.state.tainted.rules_changed()
        if change.old is not None:
            self._wake_unschedulable()

    def class_changed(self, change: Change[DeviceClass]) -> None:
        self._wake_unschedulable()

    def named_inventory_changed(self) -> None:
        """A 1.30 ResourceSlice or parameter object changed: parked pods may fit now."""
        self._wake_unschedulable()

    def node_changed(self, change: Change[Node]) -> None:
        if change.new is not None:
            self.state.node_infos.node_changed(change.new.obj)
        elif change.old is not None:
            self.state.node_infos.node_deleted(change.old.obj.name)
        self._wake_unschedulable()

    def storage_changed(self) -> None:
        """A PV, PVC, StorageClass, CSINode or CSIDriver changed: a pod parked by the volume
        plugins may fit now (kube-scheduler v1.37.2 registers these events for VolumeBinding,
        VolumeZone and NodeVolumeLimits). Their watches race the pods': a PV created before
        the pod may reach the cache after the pod's first decision."""
        self._wake_unschedulable()

    def policy_changed(self) -> None:
        """An AllocationPolicy or a namespace's labels changed: another policy may govern now."""
        self._wake_unschedulable()

    def _wake_unschedulable(self) -> None:
        for key in sorted(self.unschedulable):
            self.controller.enqueue(key)

    # -- running --------------------------------------------------------------------------------

    async def run(self) -> None:
        """Decide until `shut_down`, then wait for the writes in progress."""
        try:
            await self.controller.run()
        finally:
            await self.wait_for_writes()

    async def wait_for_writes(self) -> None:
        """Until every write task started so far (and any it started) has finished."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def shut_down(self) -> None:
        self.controller.shut_down()

    # -- one decision ---------------------------------------------------------------------------

    async def reconcile(self, key: WorkKey) -> Result:
        if self.preemptor is not None and self.preemptor.adopting:
            self._adopt_nominations(self.preemptor)
        if key in self._writing:
            self._again.add(key)  # decided again once the writes in progress are done
            return Result()
        entry_key = ObjectKey(key.namespace, key.name)
        if key.kind == "pod":
            pod_entry = self.state.pods.get(entry_key)
            if pod_entry is None or not handles(pod_entry.obj, self.scheduler_names):
                self.unschedulable.discard(key)
                return Result()
            pod = pod_entry.obj
            if not pod.spec.node_name:
                gate = self.state.framework_for(pod).run_pre_enqueue(pod)
                if not gate.ok:  # SchedulingGates: its gates' removal is a pod update
                    self.unschedulable.discard(key)
                    _log.debug("pod.not_enqueued", key=str(key), reason=", ".join(gate.reasons))
                    return Result()
            if self.gangs is not None and self.gangs.takes(pod):
                await self.gangs.schedule(self, key, pod)  # the group's cycle, all or none
                return Result()
            subject: tuple[str, str] = ("Pod", pod.metadata.uid)
            pending = claims_to_allocate(pod, self.state, self.settings.features)
        else:
            claim_entry = self.state.claims.get(entry_key)
            if claim_entry is None:
                self.unschedulable.discard(key)
                return Result()
            claim = claim_entry.obj
            subject = ("ResourceClaim", claim.metadata.uid)
            immediate = (
                claim.metadata.annotations.get(names.ALLOCATE_ANNOTATION)
                == names.ALLOCATE_IMMEDIATE
            )
            pending = [claim] if immediate and claim.status.allocation is None else []
        choice = self.governor.choose(pending, self.settings)
        for candidate in pending:
            refusal = await choice.points.before_allocate(candidate)
            if refusal is not None:
                log_refusal(key, choice, refusal.message)
                self.unschedulable.add(key)
                self._spawn(self._writer.emit(_failed(key, subject, refusal.message)))
                return Result()
        started = time.perf_counter()
        nominated = self._nominated_pod(key)
        held = self.preemptor.before_decide(nominated) if self.preemptor and nominated else None
        decision = self._decide(key, choice)
        if held is not None and self.preemptor is not None and nominated is not None:
            placed = isinstance(decision, Placement)
            expired = self.preemptor.after_decide(nominated, held, placed=placed)
            if expired is not None:
                self._spawn(expired)
        log_decision(key, choice, decision, time.perf_counter() - started)
        if isinstance(decision, Unschedulable):
            self.unschedulable.add(key)
            if decision.classic is not None and self._contexts is not None:
                self._writing.add(key)
                self._spawn(self._classic(key, subject, decision, self._contexts))
                return Result()
            message = decision.message
            if self.preemptor is not None and key.kind == "pod":
                message = self._post_filter(ObjectKey(key.namespace, key.name), message, choice)
            self._spawn(self._writer.emit(_failed(key, subject, message)))
            if decision.stale is not None:  # PostFilter: the claim goes, its deletion wakes us
                stale = decision.stale.metadata
                self._spawn(self._delete_special(ObjectKey(stale.namespace, stale.name), stale.uid))
            return Result()
        if isinstance(decision, Wait):
            # Parked without an event: the claim or pod event that ends the wait queues it, and
            # so does any change that wakes unschedulable keys (a node appearing, say).
            self.unschedulable.add(key)
            return Result()
        if isinstance(decision, Placement):
            refused = _reserve_and_permit(decision)
            if refused is not None:
                self.unschedulable.add(key)
                self._spawn(self._writer.emit(_failed(key, subject, refused)))
                return Result()
            self.unschedulable.discard(key)
            dynamicresources.reserve(decision, self.state)
            self._writing.add(key)
            self._spawn(self._carry_out(key, subject, decision, choice.points))
        return Result()

    def _adopt_nominations(self, preemptor: Preemptor) -> None:
        """Hold the device nominations an earlier leader wrote, before any decision; each pod
        held again is decided again once what is left of its timeout has passed."""
        now = datetime.datetime.now(datetime.UTC)
        held, writes = preemptor.adopt(self.settings, now)
        for pod, left in held:
            key = WorkKey("pod", pod.metadata.namespace, pod.metadata.name)
            self.controller.queue.add_after(key, left)
        for write in writes:
            self._spawn(write)

    def _decide(self, key: WorkKey, choice: Choice) -> Decision:
        """The decision on the caches as they are now (hooks may have awaited meanwhile)."""
        entry_key = ObjectKey(key.namespace, key.name)
        if key.kind == "pod":
            pod_entry = self.state.pods.get(entry_key)
            if pod_entry is None or not handles(pod_entry.obj, self.scheduler_names):
                return None
            return decide_pod(pod_entry.obj, self.state, choice.settings)
        claim_entry = self.state.claims.get(entry_key)
        if claim_entry is None:
            return None
        return decide_claim(claim_entry.obj, self.state, choice.settings)

    def _nominated_pod(self, key: WorkKey) -> Pod | None:
        """The pod of `key` when devices are nominated to it (KEP-5690), else None."""
        if self.preemptor is None or key.kind != "pod":
            return None
        entry = self.state.pods.get(ObjectKey(key.namespace, key.name))
        if entry is None or self.preemptor.claims.held(entry.obj.metadata.uid) is None:
            return None
        return entry.obj

    def _post_filter(self, pod_key_: ObjectKey, message: str, choice: Choice) -> str:
        """PostFilter (preemption) of an unschedulable pod: its writes as a task; the
        FailedScheduling text with PostFilter's, as upstream's `FitError` joins them."""
        entry = self.state.pods.get(pod_key_)
        if entry is None or self.preemptor is None:
            return message
        found = self.preemptor.post_filter(entry.obj, choice.settings)
        if found.candidate is not None:
            self._spawn(self.preemptor.carry_out(entry.obj, found.candidate))
            if self.preemptor.claims.held(entry.obj.metadata.uid) is not None:
                key = WorkKey("pod", pod_key_.namespace, pod_key_.name)
                self.controller.queue.add_after(key, self.preemptor.claims.timeout)
        return f"{message} {found.message}" if found.message else message

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the writes of one placement ------------------------------------------------------------

    async def _carry_out(
        self, key: WorkKey, subject: tuple[str, str], placement: Placement, points: HookPoints
    ) -> None:
        pending = [w.uid for w in placement.claims if w.allocation is not None]
        if placement.extended is not None:
            pending.append(placement.extended.uid)
        written: list[tuple[ObjectKey, AllocationResult]] = []
        retry = False
        current: ObjectKey | None = None
        created: list[Mapping[str, Any]] = []  # the special claim, once the server has it
        cycle = placement.cycle
        try:
            if cycle is not None:  # VolumeBinding's writes come before DynamicResources'
                bound = await cycle.framework.run_pre_bind(cycle.state, cycle.pod, placement.node)
                if not bound.ok:
                    raise PreBindFailed(", ".join(bound.reasons))
            for write in placement.claims:
                current = write.key
                await self._write_claim(write, placement)
                if write.uid in pending:
                    pending.remove(write.uid)
                if write.allocation is not None:
                    written.append((write.key, write.allocation))
            current = None
            if placement.extended is not None:
                await self._write_special(placement, placement.extended, created)
                pending.remove(placement.extended.uid)
            if placement.node_allocatable and placement.pod is not None:  # PreBind
                patch = status_patch(placement.node_allocatable)
                await self._writer.patch_pod_status(placement.pod, patch)
            if placement.bind and placement.pod is not None:
                body = binding_body(placement.pod, placement.pod_uid, placement.node)
                await self._writer.bind(body)
                self._bound(placement.pod)
                await self._writer.emit(_scheduled(key, subject, placement.node))
                await self._post_bind(placement.pod)
        except errors.APIConflictError:
            retry = True
            self.conflicts += 1
            if current is not None:
                await self._reread(current)
        except Exception as exc:  # the task boundary: report, roll back, retry with backoff
            retry = True
            _log.warning(LogEvent.ALLOCATION_WRITE_FAILED, key=str(key), error=str(exc))
            if current is not None and isinstance(exc, errors.APIServerError):
                write = next(w for w in placement.claims if w.key == current)
                if write.uid in pending:
                    pending.remove(write.uid)  # in flight until read back
                    self._settle_later(write)
            await self._writer.emit(_failed(key, subject, _write_failure(exc)))
            if current is None and _bind_cannot_succeed(exc):
                await self._unreserve(placement)
        finally:
            if retry and created:  # upstream's Unreserve deletes the special claim it created
                await self._delete_special(ObjectKey.of(created[0]), _uid(created[0]))
            for uid in pending:
                self.state.ledger.rollback(uid)
            if retry and placement.pod_uid:
                self.state.node_infos.forget(placement.pod_uid)
            if retry and cycle is not None:
                cycle.framework.run_unreserve(cycle.state, cycle.pod, placement.node)
            self._writing.discard(key)
            self._after_writes(key, placement, retry, rolled_back=bool(pending))
        for claim_key, allocation in written:  # observers only: a slow one delays nothing else
            entry = self.state.claims.get(claim_key)
            if entry is not None:
                await points.after_allocate(entry.obj, allocation)

    async def _classic(
        self, key: WorkKey, subject: tuple[str, str], decision: Unschedulable, api: ContextWriter
    ) -> None:
        """Classic DRA's writes of an unschedulable cycle, then its FailedScheduling event.

        Publishing the context is PreBind's (the cycle then stops at `waiting for resource
        driver`); requesting deallocation is PostFilter's. A 409 decides again at once.
        """
        write = decision.classic
        retry = False
        try:
            if isinstance(write, PublishContext):
                await self._publish(write, api)
            elif isinstance(write, RequestDeallocation):
                await self._hand_back(write, api)
            await self._writer.emit(_failed(key, subject, decision.message))
        except errors.APIConflictError:
            retry = True
            self.conflicts += 1
        except Exception as exc:  # the task boundary: report, retry with backoff
            retry = True
            _log.warning("classic.write_failed", key=str(key), error=str(exc))
            text = f'running PreBind plugin "DynamicResources": {exc}'  # upstream's wrapping
            await self._writer.emit(_failed(key, subject, text))
        finally:
            self._writing.discard(key)
            if retry:
                self.controller.queue.add_rate_limited(key)
            elif key in self._again:
                self.controller.enqueue(key)
            self._again.discard(key)

    async def _publish(self, write: PublishContext, api: ContextWriter) -> None:
        spec = render_scheduling_spec(write.selected_node, write.potential_nodes)
        entry = self.state.contexts.get(write.pod) if self.state.contexts is not None else None
        if entry is None:
            body = context_manifest(write.pod.namespace, write.pod.name, write.pod_uid, spec)
            answer = await api.create_context(body)
        else:
            body = {**copy.deepcopy(dict(entry.raw)), "spec": spec}
            answer = await api.update_context(body)
        if self.state.contexts is not None:
            self.state.contexts.assume(answer)
        _log.info(
            "classic.context_published",
            pod=str(write.pod),
            selected_node=write.selected_node,
            potential_nodes=len(write.potential_nodes),
        )

    async def _hand_back(self, write: RequestDeallocation, api: ContextWriter) -> None:
        entry = self.state.contexts.get(write.pod) if self.state.contexts is not None else None
        if write.clear_selected_node and entry is not None:
            raw = copy.deepcopy(dict(entry.raw))
            raw.setdefault("spec", {}).pop("selectedNode", None)
            answer = await api.update_context(raw)
            if self.state.contexts is not None:
                self.state.contexts.assume(answer)
        claim = self.state.claims.get(write.claim)
        if claim is None:
            raise errors.APIConflictError(409, "Gone", f"claim {write.claim}: gone from the cache")
        self._remember(
            await self._writer.update_claim_status(
                deallocation_body(claim.raw, write.resource_version)
            )
        )
        _log.info("classic.deallocation_requested", pod=str(write.pod), claim=str(write.claim))

    def _forget_context(self, pod: Pod) -> None:
        """A deleted pod's PodSchedulingContext goes too: what the garbage collector does
        through the ownerReference, which a bare control plane does not run (a context left
        behind would fail a new pod of the same name: not owned by it)."""
        if self._contexts is None or self.state.contexts is None:
            return
        key = ObjectKey(pod.metadata.namespace, pod.metadata.name)
        entry = self.state.contexts.get(key)
        if entry is None:
            return
        refs = entry.obj.metadata.owner_references
        if any(ref.controller and ref.uid == pod.metadata.uid for ref in refs):
            self._spawn(self._delete_context(key, entry.obj.metadata.uid))

    async def _delete_context(self, key: ObjectKey, uid: str) -> None:
        if self._contexts is None:
            return
        try:
            await self._contexts.delete_context(key, uid)
        except errors.APIError as exc:  # a 409 (another UID) or gone: nothing of ours left
            _log.warning("classic.context_delete_failed", pod=str(key), error=str(exc))

    async def _post_bind(self, pod: ObjectKey) -> None:
        """Delete the pod's PodSchedulingContext (upstream PostBind: errors only logged;
        the pod's ownerReference lets the garbage collector do it otherwise)."""
        if self._contexts is None or self.state.contexts is None:
            return
        entry = self.state.contexts.get(pod)
        if entry is not None:
            await self._delete_context(pod, entry.obj.metadata.uid)

    async def _write_claim(self, write: ClaimWrite, placement: Placement) -> None:
        entry = self.state.claims.get(write.key)
        if entry is None:
            raise errors.APIConflictError(409, "Gone", f"claim {write.key}: gone from the cache")
        raw: Mapping[str, Any] = entry.raw
        version = write.resource_version
        if write.allocation is not None and not has_finalizer(raw):
            raw = await self._writer.update_claim(finalizer_body(raw, version))
            version = str(raw["metadata"]["resourceVersion"])
            self._remember(raw)
        answer = await self._writer.update_claim_status(
            status_body(raw, version, write.allocation, placement.consumer, write.named)
        )
        self._remember(answer)
        if write.allocation is not None:
            self.state.ledger.written(write.uid, str(answer["metadata"]["resourceVersion"]))

    async def _write_special(
        self, placement: Placement, special: ExtendedWrite, created: list[Mapping[str, Any]]
    ) -> None:
        """PreBind for the special claim: create it, allocate and reserve it, name it in the pod.

        Once the server returns the allocated claim, the ledger counts its devices under the
        real UID and the stand-in's in-flight entry is dropped.
        """
        metrics = self.settings.metrics
        try:
            raw = self._remember(await self._writer.create_claim(special.claim))
        except Exception:
            if metrics is not None:
                metrics.extended_claim_created(ok=False)
            raise
        if metrics is not None:
            metrics.extended_claim_created(ok=True)
        created.append(raw)
        answer = await self._writer.update_claim_status(
            status_body(raw, _version(raw), special.allocation, placement.consumer)
        )
        self._remember(answer)
        self.state.ledger.rollback(special.uid)
        assert placement.pod is not None
        name = str(raw["metadata"]["name"])
        await self._writer.patch_pod_status(placement.pod, pod_status_patch(name, special.mappings))

    async def _delete_special(self, key: ObjectKey, uid: str) -> None:
        """Remove the finalizer from a special claim, then delete it (upstream `deleteClaim`).

        Only the claim with `uid`: a claim recreated under the name is left alone. Failures are
        logged; the next attempt finds the claim again and retries.
        """
        try:
            for _ in range(_UNRESERVE_ATTEMPTS):
                raw = await self._writer.get_claim(key)
                if raw is None or (raw.get("metadata") or {}).get("uid") != uid:
                    return
                if not has_finalizer(raw):
                    break
                try:
                    await self._writer.update_claim(without_finalizer_body(raw, _version(raw)))
                    break
                except errors.APIConflictError:
                    continue
            await self._writer.delete_claim(key, uid)
        except errors.APIError as exc:
            _log.warning("extended_claim.delete_failed", claim=str(key), error=str(exc))

    def _remember(self, answer: Mapping[str, Any]) -> Mapping[str, Any]:
        change = self.state.claims.assume(answer)
        if change is not None:
            self.state.ledger.observe(change)
        return answer

    def _bound(self, pod: ObjectKey) -> None:
        metrics = self.settings.metrics
        entry = self.state.pods.get(pod)
        created = entry.obj.metadata.creation_timestamp if entry is not None else None
        if metrics is None or created is None:
            return
        seconds = (datetime.datetime.now(datetime.UTC) - created).total_seconds()
        metrics.pod_bound(seconds_since_creation=max(seconds, 0.0))

    async def _unreserve(self, placement: Placement) -> None:
        """Upstream's Unreserve: the pod out of every claim the placement reserved."""
        for write in placement.claims:
            try:
                await self._unreserve_claim(write.key, placement.pod_uid)
            except errors.APIError as exc:  # the claims controller prunes it once the pod is gone
                _log.warning("unreserve.failed", claim=str(write.key), error=str(exc))

    async def _unreserve_claim(self, key: ObjectKey, pod_uid: str) -> None:
        deallocated = False
        for _ in range(_UNRESERVE_ATTEMPTS):
            entry = self.state.claims.get(key)
            if entry is None:
                return
            raw: Mapping[str, Any] = entry.raw
            try:
                if is_reserved_for(raw, pod_uid):
                    body, deallocated = unreserve_body(raw, _version(raw), pod_uid)
                    raw = self._remember(await self._writer.update_claim_status(body))
                # Only while nobody allocated it again meanwhile: the finalizer guards that.
                if deallocated and has_finalizer(raw) and not is_allocated(raw):
                    self._remember(
                        await self._writer.update_claim(without_finalizer_body(raw, _version(raw)))
                    )
                return
            except errors.APIConflictError:
                await self._reread(key)
        _log.warning("unreserve.failed", claim=str(key), error="conflicts on every attempt")

    def _settle_later(self, write: ClaimWrite) -> None:
        """After a claim write that got no answer (a broken connection, a timeout, a 5xx), it
        may still have landed: rolling its allocation back on the spot would free devices the
        server holds for the claim, and the next decision would hand them out again.

        So its allocation stays in flight (its pods wait) while a task of its own reads the
        claim back, for as long as the server does not answer (403s while a restarted API
        server loads its RBAC included), takes the answer into the store and ledger, so that
        an allocation that landed counts as observed, and only then rolls the in-flight one
        back and wakes the waiting pods, through the claim store's hooks, which reach the
        controllers of whichever term is running. The task is not a write: shutting down or
        losing the Lease does not wait for it, and it settles the shared ledger for the next
        term.
        """
        task = asyncio.get_running_loop().create_task(self._settle(write))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def _settle(self, write: ClaimWrite) -> None:
        delay = _SETTLE_FIRST_DELAY
        while True:
            try:
                raw = await self._writer.get_claim(write.key)
                break
            except errors.APIError as exc:
                _log.warning("write.settling", claim=str(write.key), error=str(exc), delay=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, _SETTLE_MAX_DELAY)
        if raw is not None:
            self._remember(raw)
        self.state.ledger.rollback(write.uid)
        self._wake_unschedulable()
        entry = self.state.claims.get(write.key)
        if entry is not None:  # the pods of the claim wait on it, maybe in a later term's queue
            for hook in self.state.claims.assumed_hooks:
                hook(Change(entry, entry))

    async def _reread(self, key: ObjectKey) -> None:
        """After a 409: fetch the claim, so the next decision starts from the server's version."""
        try:
            raw = await self._writer.get_claim(key)
        except errors.APIError:
            return  # the watch delivers it; the retry backs off meanwhile
        if raw is not None:
            self._remember(raw)

    def _after_writes(
        self, key: WorkKey, placement: Placement, retry: bool, *, rolled_back: bool
    ) -> None:
        if retry:
            self.controller.queue.add_rate_limited(key)
        elif key in self._again:
            self.controller.enqueue(key)
        self._again.discard(key)
        for write in placement.claims:  # pods waiting for this allocation to be written
            for entry in self.state.pods.by_index(PODS_BY_CLAIM, write.key):
                if handles(entry.obj, self.scheduler_names) and pod_key(entry.obj) != key:
                    self.controller.enqueue(pod_key(entry.obj))
        if rolled_back:
            self._wake_unschedulable()


def _version(raw: Mapping[str, Any]) -> str:
    return str(raw["metadata"]["resourceVersion"])


def _uid(raw: Mapping[str, Any]) -> str:
    return str(raw["metadata"]["uid"])


def _bind_cannot_succeed(exc: Exception) -> bool:
    """A client error no retry cures: the pod gone (404), refused (403), invalid (400, 422)."""
    return isinstance(exc, errors.APIError) and 400 <= exc.status < 500 and exc.status != 429


class PreBindFailed(Exception):
    """A PreBind plugin failed; the message is the framework's (upstream's wording)."""


def _reserve_and_permit(placement: Placement) -> str | None:
    """The framework's Reserve, then Permit, on the node chosen; on a failure or a rejection,
    Unreserve and the FailedScheduling message. Permit's Wait is not supported by the live
    scheduler (no plugin of its profiles answers it) and is refused like a rejection."""
    cycle = placement.cycle
    if cycle is None:
        return None
    framework, state, pod = cycle.framework, cycle.state, cycle.pod
    status = framework.run_reserve(state, pod, placement.node)
    if status.ok:
        status, _ = framework.run_permit(state, pod, placement.node)
        if status.ok:
            return None
    framework.run_unreserve(state, pod, placement.node)
    return ", ".join(status.reasons)


def _write_failure(exc: Exception) -> str:
    if isinstance(exc, PreBindFailed):
        return str(exc)
    if isinstance(exc, errors.APIError):
        return f"binding rejected: {exc.message}"
    return f"running PreBind: {exc}"


def _failed(key: WorkKey, subject: tuple[str, str], message: str) -> Event:
    return Event(
        kind=subject[0],
        involved=ObjectKey(key.namespace, key.name),
        uid=subject[1],
        type=names.EVENT_TYPE_WARNING,
        reason=names.EVENT_FAILED_SCHEDULING,
        message=message,
    )


def _scheduled(key: WorkKey, subject: tuple[str, str], node: str) -> Event:
    return Event(
        kind=subject[0],
        involved=ObjectKey(key.namespace, key.name),
        uid=subject[1],
        type=names.EVENT_TYPE_NORMAL,
        reason=names.EVENT_SCHEDULED,
        message=f"Successfully assigned {key.namespace}/{key.name} to {node}",
    )
