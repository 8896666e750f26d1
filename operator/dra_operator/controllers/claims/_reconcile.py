"""The claims controller's reconcile: read the stores, decide, carry the plan out.

The API is reached only through `ClaimsWriter`, the seam `kube/` implements (a Protocol owned
here, by its consumer); everything else is the stores and the pure decisions. The reconcile is
level-based: it reads the current state for its key and never sees the event that queued it.

Carrying out a plan follows the rules in `_writes.py`: writes run in order and the first failure
fails the reconcile (the queue retries with backoff, and the retry decides afresh: a 409 is
never re-sent). Our own writes go into the claim store at once (`Store.assume`), so a retry that
runs before the watch catches up neither creates a claim twice nor prunes twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from dra_operator import errors, names
from dra_operator.cluster import (
    CLAIMS_BY_OWNER_POD,
    CLAIMS_BY_OWNER_POD_GROUP,
    PODS_BY_CLAIM,
    PODS_BY_POD_GROUP,
    PODS_BY_TEMPLATE,
    Entry,
    ObjectKey,
    RecentlyDeleted,
    Store,
)
from dra_operator.controllers import Result
from dra_operator.controllers.claims._events import WorkKey
from dra_operator.controllers.claims._groups import sync_pod_group
from dra_operator.controllers.claims._sync import (
    ALL_FEATURES,
    ClaimsFeatures,
    claims_to_check,
    creation_failed,
    sync_claim,
    sync_pod,
)
from dra_operator.controllers.claims._writes import (
    ApplyPodClaimStatuses,
    CreateClaim,
    DeleteClaim,
    Event,
    NeedPods,
    Plan,
    PruneReservedFor,
    RemoveFinalizer,
    ReserveClaim,
)
from dra_operator.model import Pod, PodGroup, ResourceClaim, ResourceClaimTemplate
from dra_operator.observability import LogEvent, get_logger

_log = get_logger("dra_operator.controllers.claims")


class ClaimsWriter(Protocol):
    """The API calls of the claims controller; implementations raise `errors.APIError`.

    Every method that writes a claim returns the claim as the server answered (raw JSON).
    """

    async def create_claim(self, namespace: str, manifest: Mapping[str, Any]) -> Mapping[str, Any]:
        """POST a ResourceClaim."""
        ...

    async def list_claims(self, namespace: str) -> list[Mapping[str, Any]]:
        """Every claim of a namespace, read from the API server (not a cache)."""
        ...

    async def apply_pod_status(self, namespace: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """Server-side apply to `pods/status` as `ResourceClaimController`, forced; the pod as
        the server answered."""
        ...

    async def apply_pod_group_status(
        self, namespace: str, body: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Server-side apply to `podgroups/status` as `ResourceClaimController`, forced."""
        ...

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """PUT `resourceclaims/status`; the body's resourceVersion is the precondition."""
        ...

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """PUT a ResourceClaim; the body's resourceVersion is the precondition."""
        ...

    async def delete_claim(self, key: ObjectKey, uid: str) -> None:
        """DELETE with a UID precondition; already gone is success."""
        ...

    async def get_pod(self, namespace: str, name: str) -> Pod | None:
        """GET a pod from the server, bypassing the cache; None when not found."""
        ...

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """GET a claim from the server, bypassing the cache; None when not found."""
        ...

    async def emit(self, event: Event) -> None:
        """Record an Event (component `resource_claim`); never raises."""
        ...


class StoreView:
    """`ClaimsView` and `PodsByClaim` over the stores (built with the cluster indexers)."""

    def __init__(
        self,
        pods: Store[Pod],
        claims: Store[ResourceClaim],
        templates: Store[ResourceClaimTemplate],
        deleted: RecentlyDeleted,
        pod_groups: Store[PodGroup] | None = None,
    ) -> None:
        self._pods = pods
        self._claims = claims
        self._templates = templates
        self._deleted = deleted
        self._pod_groups = pod_groups  # None: the server serves no PodGroups

    @property
    def serves_pod_groups(self) -> bool:
        return self._pod_groups is not None

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        if self._pod_groups is None:
            return None
        entry = self._pod_groups.get(ObjectKey(namespace, name))
        return entry.obj if entry else None

    def claims_owned_by_group(self, group_uid: str) -> list[ResourceClaim]:
        return [entry.obj for entry in self._claims.by_index(CLAIMS_BY_OWNER_POD_GROUP, group_uid)]

    def pods_in_group(self, namespace: str, name: str) -> list[Pod]:
        key = ObjectKey(namespace, name)
        return [entry.obj for entry in self._pods.by_index(PODS_BY_POD_GROUP, key)]

    def pod(self, namespace: str, name: str) -> Pod | None:
        entry = self._pods.get(ObjectKey(namespace, name))
        return entry.obj if entry else None

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        entry = self._claims.get(ObjectKey(namespace, name))
        return entry.obj if entry else None

    def claims_owned_by(self, pod_uid: str) -> list[ResourceClaim]:
        return [entry.obj for entry in self._claims.by_index(CLAIMS_BY_OWNER_POD, pod_uid)]

    def template(self, namespace: str, name: str) -> Entry[ResourceClaimTemplate] | None:
        return self._templates.get(ObjectKey(namespace, name))

    def pod_was_deleted(self, uid: str) -> bool:
        return uid in self._deleted

    def pods_using_claim(self, namespace: str, name: str) -> list[Pod]:
        key = ObjectKey(namespace, name)
        return [entry.obj for entry in self._pods.by_index(PODS_BY_CLAIM, key)]

    def pods_using_template(self, namespace: str, name: str) -> list[Pod]:
        key = ObjectKey(namespace, name)
        return [entry.obj for entry in self._pods.by_index(PODS_BY_TEMPLATE, key)]


CreatedHook = Callable[[bool, bool], None]
"""`(ok, admin_access)` for every create request of a claim from a template (upstream's
`resourceclaim_controller_creates_total`)."""


class ClaimsReconciler:
    """`reconcile(WorkKey) -> Result` for `controllers.Controller`."""

    def __init__(
        self,
        view: StoreView,
        claims: Store[ResourceClaim],
        writer: ClaimsWriter,
        features: ClaimsFeatures = ALL_FEATURES,
        *,
        on_created: CreatedHook | None = None,
        pods: Store[Pod] | None = None,
        recheck: Callable[[], bool] = lambda: True,
    ) -> None:
        self._view = view
        self._recheck = recheck  # whether another claims controller may have just created some
        # Pod claims whose create got no answer (connection lost, timeout, 5xx): the claim may
        # exist on the server without our cache knowing, so the next try asks first.
        self._unanswered: set[tuple[str, str]] = set()
        self._claims = claims
        self._pods = pods  # where our pod status writes go at once (`Store.assume`)
        self._writer = writer
        self._features = features
        self._on_created = on_created

    async def __call__(self, key: WorkKey) -> Result:
        if key.kind == "pod":
            plan = await self._decide_pod(key)
        elif key.kind == "podgroup":
            plan = sync_pod_group(
                self._view.pod_group(key.namespace, key.name),
                self._view,
                admin_access=self._features.admin_access,
                prioritized_list=self._features.prioritized_list,
            )
        else:
            plan = await self._decide_claim(key)
        await self.carry_out(plan)
        if plan.error is not None:
            raise errors.DRAOperatorError(plan.error)
        return Result()

    async def _decide_pod(self, key: WorkKey) -> Plan:
        pod = self._view.pod(key.namespace, key.name)
        need = claims_to_check(pod, self._view, self._features)
        if pod is None or need is None:
            return sync_pod(pod, self._view, self._features)
        checked: dict[str, ResourceClaim | None] = {}
        for name, pod_claim in zip(need.names, need.pod_claims, strict=True):
            try:
                checked[name] = await self._writer.get_claim(need.namespace, name)
            except errors.APIError as exc:  # upstream's handleClaim error: event, then retry
                message = f"checking claim existence: {exc.message}"
                await self._writer.emit(creation_failed(pod, pod_claim, message))
                raise
        # The watch may have moved on while we asked; decide on what the cache holds now.
        return sync_pod(
            self._view.pod(key.namespace, key.name), self._view, self._features, checked
        )

    async def _decide_claim(self, key: WorkKey) -> Plan:
        claim = self._view.claim(key.namespace, key.name)
        decision = sync_claim(claim, self._view)
        if isinstance(decision, NeedPods):
            checked = {
                name: await self._writer.get_pod(decision.namespace, name)
                for name in decision.names
            }
            # The watch may have moved on while we asked; decide on what the cache holds now.
            decision = sync_claim(self._view.claim(key.namespace, key.name), self._view, checked)
            if isinstance(decision, NeedPods):  # a reservation appeared meanwhile
                raise errors.DRAOperatorError(
                    f"claim {key.namespace}/{key.name}: reservations changed during the check"
                )
        return decision

    async def carry_out(self, plan: Plan) -> None:
        """Run the writes in order; the first failure propagates (`errors.APIError`)."""
        created: dict[str, str] = {}
        answers: dict[ObjectKey, Mapping[str, Any]] = {}
        for write in plan.writes:
            if isinstance(write, CreateClaim):
                created[write.pod_claim_name] = await self._create(write)
            elif isinstance(write, ApplyPodClaimStatuses) and write.kind == "PodGroup":
                await self._writer.apply_pod_group_status(
                    write.namespace, write.apply_body(created)
                )
            elif isinstance(write, ApplyPodClaimStatuses):
                pod = await self._writer.apply_pod_status(
                    write.namespace, write.apply_body(created)
                )
                if self._pods is not None:
                    # The scheduler queues the pod on this, not when the watch shows it later.
                    self._pods.assume(pod)
            elif isinstance(write, ReserveClaim | PruneReservedFor):
                body = write.status_body(self._base(write.claim, write.resource_version, answers))
                answers[write.claim] = self._remember(await self._writer.update_claim_status(body))
                if isinstance(write, PruneReservedFor) and write.deallocate:
                    _log.info(LogEvent.CLAIM_DEALLOCATED, claim=str(write.claim))
            elif isinstance(write, RemoveFinalizer):
                body = write.body(self._base(write.claim, write.resource_version, answers))
                answers[write.claim] = self._remember(await self._writer.update_claim(body))
            elif isinstance(write, DeleteClaim):
                await self._writer.delete_claim(write.claim, write.uid)
                _log.info(LogEvent.CLAIM_DELETED, claim=str(write.claim))
            else:
                await self._writer.emit(write)

    async def _create(self, write: CreateClaim) -> str:
        """Create the claim, unless the API server already has one for this pod claim.

        Our cache knows our own creations (`Store.assume`), not those of another claims
        controller that ran a moment ago (kube-controller-manager during a handover): a
        second claim for one pod claim would be allocated too, so the server is asked first
        while `recheck` says another controller was at work recently, and after our own create
        for this pod claim got no answer (it may have landed). Not always: a LIST of the
        namespace per creation would make filling a namespace quadratic.
        """
        existing = None
        asked = (write.pod_uid, write.pod_claim_name)
        if asked in self._unanswered or self._recheck():
            existing = next(
                (
                    c
                    for c in await self._writer.list_claims(write.namespace)
                    if write.is_created_by(c)
                ),
                None,
            )
        self._unanswered.discard(asked)
        if existing is not None:
            self._remember(existing)
            return str(existing["metadata"]["name"])
        try:
            answer = await self._writer.create_claim(write.namespace, write.manifest())
        except errors.APIError as exc:
            if isinstance(exc, errors.APIServerError):
                self._unanswered.add(asked)
            if self._on_created is not None:
                self._on_created(False, write.admin_access)
            # Upstream's text: the name is empty when the server generates it.
            message = f"create ResourceClaim {write.name}: {exc.message}"
            await self._writer.emit(
                Event(
                    involved=ObjectKey(write.namespace, write.pod_name),
                    uid=write.pod_uid,
                    type=names.EVENT_TYPE_WARNING,
                    reason=names.EVENT_FAILED_RESOURCE_CLAIM_CREATION,
                    message=f"PodResourceClaim {write.pod_claim_name}: {message}",
                )
            )
            raise
        if self._on_created is not None:
            self._on_created(True, write.admin_access)
        self._remember(answer)
        name = str(answer["metadata"]["name"])
        _log.info(
            LogEvent.CLAIM_CREATED,
            claim=f"{write.namespace}/{name}",
            pod=f"{write.namespace}/{write.pod_name}",
            pod_claim=write.pod_claim_name,
        )
        return name

    def _base(
        self,
        key: ObjectKey,
        resource_version: str | None,
        answers: Mapping[ObjectKey, Mapping[str, Any]],
    ) -> Mapping[str, Any]:
        """The raw claim a write builds on: the previous answer when chained, else the cache."""
        if resource_version is None and key in answers:
            return answers[key]
        entry = self._claims.get(key)
        if entry is None:
            raise errors.DRAOperatorError(f"claim {key}: gone from the cache before the write")
        return entry.raw

    def _remember(self, answer: Mapping[str, Any]) -> Mapping[str, Any]:
        self._claims.assume(answer)
        return answer
