"""Per-claim preparation before the search, and device eligibility per request.

Upstream's `validateDeviceRequest` and `isSelectable`: every request (or subrequest) gets a
`RequestData` with its class, count and, for `All`, the devices it must take; shapes upstream
cannot handle are fatal `AllocationInputError`s with upstream's texts. Eligibility (binding
conditions, class selectors, request selectors, per-device node selection) is memoised per
(request, device) for the call (per class and device where the request does not matter), and
the selector outcomes also across calls in a `SelectionMemo` when the caller keeps one; a CEL
error is remembered and raised only when the search reaches that device, so looking ahead
(for pruning) never raises what upstream would not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import Node, SelectorEvaluator
from dra_operator.allocator._nodes import node_matches
from dra_operator.allocator._pools import Pool
from dra_operator.allocator._selection import SelectionMemo
from dra_operator.errors import AllocationInputError, CELCompileError, CELError
from dra_operator.model import (
    Device,
    DeviceClass,
    DeviceID,
    DeviceSelector,
    DeviceToleration,
    Quantity,
    ResourceClaim,
    ResourceSlice,
)

MAX_RESULTS = 32  # resource.k8s.io AllocationResultsMaxSize
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
    "with has() for optional fields"
)

RequestKey = tuple[int, int, int]  # claim, request, subrequest (0 without subrequests)


class Candidate:
    """One device at its place in upstream's search order (`index`, unique per call).

    A plain slotted class, not a dataclass: thousands are made per call, and the DeviceID is
    built only when something asks for it (results, ledger lookups, error texts).
    """

    __slots__ = ("_id", "device", "driver", "index", "pool", "slice")

    def __init__(self, device: Device, piece: ResourceSlice, pool: Pool, index: int) -> None:
        self.device = device
        self.slice = piece
        self.pool = pool
        self.index = index
        self.driver = pool.id.driver  # asked for on every selector and constraint check
        self._id: DeviceID | None = None

    @property
    def id(self) -> DeviceID:
        found = self._id
        if found is None:
            found = self._id = DeviceID(self.pool.id.driver, self.pool.id.pool, self.device.name)
        return found

    @property
    def key(self) -> tuple[str, str, str]:
        """(driver, pool, device) as a plain tuple, cheaper than `id` for set lookups."""
        return (self.pool.id.driver, self.pool.id.pool, self.device.name)

    def __repr__(self) -> str:
        return f"Candidate({self.index}: {self.id})"


def candidates_of(pools: Sequence[Pool]) -> list[Candidate]:
    """Every device of the usable pools, in upstream's order: pools, slices, devices."""
    found: list[Candidate] = []
    for pool in pools:
        if not pool.is_usable:
            continue
        for piece in pool.slices:
            for device in piece.devices:
                found.append(Candidate(device, piece, pool, len(found)))
    return found


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a device cannot serve a request; `kind` groups explanations."""

    kind: str  # binding-conditions, class-selector, request-selector, node
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SelectorFailure:
    """A selector that could not be compiled or evaluated for one device (fatal if reached)."""

    error: CELError
    class_name: str  # empty for a request selector
    index: int


@dataclass(slots=True, kw_only=True)
class RequestData:
    key: RequestKey
    name: str  # request name, or subrequest name when `parent` is set
    parent: str
    device_class: DeviceClass
    selectors: tuple[DeviceSelector, ...]
    tolerations: tuple[DeviceToleration, ...]
    admin_access: bool
    capacity: Mapping[str, Quantity] | None
    all_devices: bool
    num_devices: int
    devices: list[Candidate] = field(default_factory=list)  # All mode, in search order
    # DRADerivedAttributes (1.37): attribute name -> CEL expression, for constraints only
    derived: Mapping[str, str] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


Verdict = Rejection | SelectorFailure | None  # None: the device can serve the request


class Verdicts:
    """One request's verdicts so far: by candidate index, and as masks of candidate indices."""

    __slots__ = ("by_index", "judged", "rejected", "selectable")

    def __init__(self) -> None:
        self.by_index: dict[int, Verdict] = {}
        self.judged = 0  # any verdict
        self.selectable = 0  # verdict None
        self.rejected = 0  # a Rejection (not a selector failure, which must be reached)

    def record(self, index: int, verdict: Verdict) -> None:
        self.by_index[index] = verdict
        self.judged |= 1 << index
        if verdict is None:
            self.selectable |= 1 << index
        elif isinstance(verdict, Rejection):
            self.rejected |= 1 << index


def claim_ref(claim: ResourceClaim) -> str:
    """klog.KObj: ``namespace/name``, or just the name when cluster-scoped."""
    meta = claim.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


class Eligibility:
    """Memoised `isSelectable` for one allocation call.

    A device's verdict on a class's selectors does not depend on the request, so it is
    memoised per (class, device) and shared by every request of that class: a claim with
    several requests (or several claims) of one class evaluates each class selector once per
    device, where upstream evaluates it once per request and device.
    """

    __slots__ = (
        "_by_class",
        "_claims",
        "_evaluate",
        "_features",
        "_kept",
        "_memo",
        "_node",
        "_selector_ids",
    )

    def __init__(
        self,
        claims: list[ResourceClaim],
        evaluate: SelectorEvaluator,
        features: Features,
        node: Node | None,
        kept: SelectionMemo | None = None,
    ) -> None:
        self._claims = claims
        self._evaluate = evaluate
        self._features = features
        self._node = node
        self._memo: dict[RequestKey | str, Verdicts] = {}
        self._by_class: dict[tuple[str, int], Verdict] = {}
        self._kept = kept  # selector outcomes across calls
        self._selector_ids: dict[tuple[str, int], int] = {}  # by (class name, id(selectors))
        if kept is not None:
            kept.bind(features, evaluate)

    def check(self, request: RequestData, candidate: Candidate) -> Rejection | None:
        """None when selectable; raises the remembered fatal error for this device."""
        found = self.peek(request, candidate)
        if isinstance(found, SelectorFailure):
            raise self._fatal(request, found, candidate) from found.error
        return found

    def peek(self, request: RequestData, candidate: Candidate) -> Verdict:
        """Like `check`, but returns a selector error instead of raising it."""
        known = self.known(request)
        try:
            return known.by_index[candidate.index]
        except KeyError:
            pass
        found = self._compute(request, candidate)
        known.record(candidate.index, found)
        return found

    def known(self, request: RequestData) -> Verdicts:
        """The verdicts computed so far for `request` (read-only use).

        The search's hot loop reads them directly: a device known to be selectable needs no
        further call, one known to be rejected can be skipped; any other goes through
        `check`, which raises a remembered error.
        """
        key = self.verdicts_key(request)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = Verdicts()
        return found

    @staticmethod
    def verdicts_key(request: RequestData) -> RequestKey | str:
        """Requests with equal keys get the same verdicts on every device.

        Without request selectors the verdict depends on the class and device only, so such
        requests of one class share their verdicts (and masks).
        """
        return request.key if request.selectors else request.device_class.metadata.name

    def _is_held_back(self, candidate: Candidate) -> bool:
        """Binding conditions without the feature: rejected before any selector runs."""
        return not self._features.device_binding_and_status and bool(
            candidate.device.binding_conditions
        )

    def _class_verdict(self, cls: DeviceClass, candidate: Candidate) -> Verdict:
        class_key = (cls.metadata.name, candidate.index)
        try:
            return self._by_class[class_key]
        except KeyError:
            pass
        found = self._by_class[class_key] = self._selectors(
            cls.metadata.name, cls.selectors, candidate
        )
        return found

    def _compute(self, request: RequestData, candidate: Candidate) -> Verdict:
        device = candidate.device
        if self._is_held_back(candidate):
            return Rejection("binding-conditions")
        found = self._class_verdict(request.device_class, candidate)
        if found is None and request.selectors:
            found = self._selectors("", request.selectors, candidate)
        if found is not None:
            return found
        if candidate.slice.per_device_node_selection and not node_matches(
            self._node, device.node_name, device.all_nodes, device.node_selector
        ):
            return Rejection("node")
        return None

    def _selectors(
        self, class_name: str, selectors: tuple[DeviceSelector, ...], candidate: Candidate
    ) -> Verdict:
        """The first selector that fails or rejects (a class's when `class_name` is set)."""
        kept = self._kept
        if kept is None:
            return self._evaluate_selectors(class_name, selectors, candidate)
        local = (class_name, id(selectors))  # the selectors tuple lives as long as the call
        selector_id = self._selector_ids.get(local)
        if selector_id is None:
            selector_id = self._selector_ids[local] = kept.selector_id(
                (class_name, tuple(s.cel or "" for s in selectors))
            )
        driver = candidate.driver
        boxed = kept.get(candidate.device, driver, selector_id)
        if boxed is None:
            boxed = (self._evaluate_selectors(class_name, selectors, candidate),)
            kept.put(candidate.device, driver, selector_id, boxed)
        return boxed[0]

    def _evaluate_selectors(
        self, class_name: str, selectors: tuple[DeviceSelector, ...], candidate: Candidate
    ) -> Verdict:
        device = candidate.device
        if self._features.is_stable_tier and device.allow_multiple_allocations is not None:
            # upstream's stable tier builds the CEL device without allowMultipleAllocations
            device = replace(device, allow_multiple_allocations=None)
        for index, selector in enumerate(selectors):
            try:
                matched = self._evaluate(selector.cel or "", candidate.driver, device)
            except CELError as err:
                return SelectorFailure(err, class_name, index)
            if not matched:
                if class_name:
                    return Rejection("class-selector", f"#{index} of class {class_name}")
                return Rejection("request-selector", f"#{index}")
        return None

    def _fatal(
        self, request: RequestData, failure: SelectorFailure, candidate: Candidate
    ) -> AllocationInputError:
        """Upstream's text; 1.37 names the device in runtime errors and adds a hint to
        "no such key" ones (`cel.EnhanceRuntimeError`)."""
        if failure.class_name:
            where = f"class {failure.class_name}"
        else:
            where = f"claim {claim_ref(self._claims[request.key[0]])}"
        if isinstance(failure.error, CELCompileError):
            return AllocationInputError(
                f"{where}: selector #{failure.index}: CEL compile error: {failure.error}"
            )
        if not self._features.since_137:
            return AllocationInputError(
                f"{where}: selector #{failure.index}: CEL runtime error: {failure.error}"
            )
        detail = str(failure.error)
        if "no such key:" in detail:
            detail += NO_SUCH_KEY_HINT
        return AllocationInputError(
            f"{where}: selector #{failure.index} on device {candidate.id}: "
            f"CEL runtime error: {detail}"
        )
