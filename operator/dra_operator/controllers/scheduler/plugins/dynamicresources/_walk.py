"""The node walk: the framework's Filter, then DynamicResources' Filter and Score, per node.

kube-scheduler's `findNodesThatFitPod` and `prioritizeNodes` (pkg/scheduler/schedule_one.go of
v1.37.2) with DynamicResources' Filter folded in, because its Filter is the allocator and costs
most: nodes are walked by name, the framework's Filter (`node_filter`) first, the allocator
(`_filter.allocate_on`) only on nodes that pass it. The walk keeps three savings (see `place`):
per-shape verdicts (`Verdicts`: a node known to miss these claims is not asked again, one known
to fit is allocated on only when chosen), the first fit when every node scores alike, and
`percentageOfNodesToScore` (`nodes_to_score`) with upstream's rotating start otherwise, where
the allocator runs lazily on the best-scored node only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence

from dra_operator import errors
from dra_operator.allocator import (
    Explanation,
    FirstFit,
)
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._explain import claim_failure
from dra_operator.controllers.scheduler._state import Settings, State
from dra_operator.controllers.scheduler._verdicts import (
    Fits,
    Rejected,
    Verdict,
    shape_of,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._filter import (
    allocate_on,
    miss_reason,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._score import (
    Fit,
    Scorer,
    ranked,
    scores_alike,
)
from dra_operator.model import (
    AllocationResult,
    ExtendedClaim,
    Node,
    ResourceClaim,
)
from dra_operator.observability import LogEvent, get_logger

_MIN_NODES_TO_SCORE = 100
_MIN_PERCENTAGE_TO_SCORE = 5

_log = get_logger("dra_operator.controllers.scheduler")
_levels = logging.getLogger("dra_operator.controllers.scheduler")  # stdlib: cached checks


def nodes_to_score(total: int, percentage: int) -> int:
    """How many fitting nodes a scored decision looks at: kube-scheduler's
    `numFeasibleNodesToFind` (all below 100 nodes; else `percentage`, or when 0 the adaptive
    50 % minus 1 % per 125 nodes, at least 5 %; never fewer than 100)."""
    if total < _MIN_NODES_TO_SCORE or percentage >= 100:
        return total
    if percentage <= 0:
        percentage = max(_MIN_PERCENTAGE_TO_SCORE, 50 - total // 125)
    return max(_MIN_NODES_TO_SCORE, total * percentage // 100)


def place(
    candidates: Sequence[Node],
    claims: Sequence[ResourceClaim],
    node_filter: Callable[[Node], list[str]],
    state: State,
    settings: Settings,
    *,
    every_node: bool,
    who: str,
    extended_for: Callable[[Node], ExtendedClaim | None] | None = None,
    scorer: Scorer | None = None,
    percentage: int | None = None,
    fits: Callable[[Node, Sequence[AllocationResult]], list[str]] | None = None,
) -> (
    tuple[str, tuple[AllocationResult, ...], ExtendedClaim | None]
    | list[list[str]]
    | errors.AllocationInputError
):
    """The best node for `claims` among `candidates` (`every_node`: all nodes, by name), their
    allocation there and the special claim allocated with them (last), every rejected node's
    reasons (for the FitError), or a fatal input error.

    `extended_for` builds a node's special claim for DRA-backed extended resources (None where
    the node serves them natively); its claims differ per node, so no verdict is reused then.
    `who` names the pod or claim in the per-node debug lines (`--log-level debug`). `scorer`
    gives the framework's Score totals of the fitting nodes, added to the policy's scores
    rescaled as a Score plugin's of weight 2 (`as_node_score`); the profile's `percentage`
    of nodes to score wins over the settings' when given. `fits`
    is the node-allocatable check of a node's allocation (`_nodealloc_fit`); no verdict is
    reused with it, since it depends on the pod and on the node's room.

    Nodes are tried in name order. When every node scores alike (FirstFit, or nothing to
    allocate) the first that fits wins, so the search stops there; a scored policy looks at
    `nodes_to_score` fitting nodes, starting where the previous decision stopped (upstream's
    `nextStartNodeIndex`), and takes the best score, ties to the smallest name. A node whose
    verdict for these claims is known (`State.verdicts`) is not handed to the allocator; over
    every node, only those not known to miss are walked at all, and the misses are explained
    only when no node fits.

    With framework scores but DRA scores alike (`scores_alike`), allocation is lazy: the
    sample is the nodes that pass the Filters, scored first; the allocator then runs on the
    best one only. Where it fails there, the node is rejected with the allocator's reason (as
    if its Filter had failed), the walk goes on for one more node, and the sample is scored
    again; so the allocator runs about once per decision instead of once per sampled node.
    """
    policy = settings.policy
    memo = state.verdicts if claims and extended_for is None and fits is None else None
    debug = _levels.isEnabledFor(logging.DEBUG)
    shape = None
    if memo is not None:
        memo.sync(
            slices=state.slices,
            nodes=state.nodes,
            classes=state.classes,
            tainted=state.tainted,
            ledger=state.ledger,
        )
        shape = shape_of(claims, policy, settings.budget)
    names = tuple(claim.metadata.name for claim in claims)
    alike = (not claims or isinstance(policy, FirstFit)) and scorer is None
    share = percentage if percentage is not None else settings.percentage_to_score
    wanted = 1 if alike else nodes_to_score(len(candidates), share)
    walk: Iterable[Node] = candidates
    skips_misses = memo is not None and shape is not None and every_node
    if memo is not None and shape is not None and every_node:
        walk = memo.open_nodes(shape, state.nodes)
    rotate = not alike and wanted < len(candidates)
    start = 0
    if rotate:
        ordered = walk if isinstance(walk, Sequence) else list(walk)
        start = state.score_start % max(len(ordered), 1)
        walk = (ordered[(start + i) % len(ordered)] for i in range(len(ordered)))  # no copy
    classes = state.class_map()
    lazy = scorer is not None and bool(claims) and scores_alike(claims, policy)
    rejected: list[list[str]] = []
    known_misses: list[tuple[Node, Verdict | None]] = []
    fitting: list[Fit] = []
    untried: dict[str, Node] = {}  # lazily: passed the filters, the allocator not asked yet
    learned: list[tuple[str, Verdict]] = []  # recorded after the walk, which reads the memo
    visited: set[str] = set()

    def try_node(node: Node) -> Fit | errors.AllocationInputError | None:
        """The node's fit, or None (rejected with the allocator's reason, recorded)."""
        extra = extended_for(node) if extended_for is not None else None
        tried = [*claims, extra.claim] if extra is not None else claims
        outcome = allocate_on(node, tried, classes, state, settings)
        if isinstance(outcome, errors.AllocationInputError):
            return outcome
        if isinstance(outcome, Explanation):
            mapped = {m.request_name: m.resource_name for m in extra.mappings} if extra else {}
            reason = claim_failure(outcome, mapped)
            rejected.append([reason])
            if debug:
                _log.debug(LogEvent.ALLOCATION_NODE, pod=who, node=node.name, rejected=reason)
            if not outcome.aborted:
                learned.append((node.name, Rejected(reason, names)))
            return None
        results, score = outcome
        short = fits(node, results[: len(claims)]) if fits is not None else []
        if short:
            rejected.append(short)
            return None
        if debug:
            _log.debug(LogEvent.ALLOCATION_NODE, pod=who, node=node.name, fits=score)
        learned.append((node.name, Fits(score)))
        return (score, node.name, results, extra)

    def walk_on(nodes: Iterator[Node]) -> errors.AllocationInputError | None:
        """Walk until `wanted` nodes fit (lazily: may fit), or the nodes run out."""
        for node in nodes:
            visited.add(node.name)
            verdict = memo.get(node.name, shape) if memo is not None and shape is not None else None
            if isinstance(verdict, Rejected):
                known_misses.append((node, verdict))
                continue
            problems = node_filter(node)
            if problems:
                rejected.append(problems)
                if debug:
                    _log.debug(LogEvent.ALLOCATION_NODE, pod=who, node=node.name, rejected=problems)
                continue
            if isinstance(verdict, Fits):
                fitting.append((verdict.score, node.name, None, None))
            elif lazy:
                untried[node.name] = node
                fitting.append((0.0, node.name, None, None))
            else:
                fit = try_node(node)
                if isinstance(fit, errors.AllocationInputError):
                    return fit
                if fit is not None:
                    fitting.append(fit)
            if len(fitting) >= wanted:
                break
        return None

    nodes = iter(walk)
    failed = walk_on(nodes)
    best: Fit | None = None
    while failed is None and fitting:
        best = ranked(fitting, scorer)[0]
        if best[1] not in untried:
            break
        # Lazily: the allocator on the best node not asked yet; where it fails, the walk goes
        # on for one more node and the sample is scored again, as if it had been filtered out.
        fit = try_node(untried.pop(best[1]))
        fitting = [f for f in fitting if f[1] != best[1]]
        if isinstance(fit, errors.AllocationInputError):
            failed = fit
        elif fit is not None:
            fitting.append(fit)
            best = (best[0], best[1], fit[2], fit[3])
            break
        else:
            best = None
            failed = walk_on(nodes)
    if failed is not None:
        return failed
    if memo is not None and shape is not None:
        for name, verdict in learned:
            memo.put(name, shape, verdict)
    if rotate:
        state.score_start = (start + len(visited)) % max(len(candidates), 1)
    if best is None:
        if skips_misses:
            known_misses += [(n, None) for n in candidates if n.name not in visited]
        for node, miss in known_misses:
            problems = node_filter(node)
            if not problems:
                why = miss_reason(node, miss, names, claims, classes, state, settings)
                if isinstance(why, errors.AllocationInputError):
                    return why
                problems = [why]
            rejected.append(problems)
        return rejected
    _, name, kept, extra = best
    if kept is not None:
        return name, kept, extra
    # A reused verdict: allocate on the chosen node only (the allocator is deterministic).
    entry = state.nodes.get(ObjectKey("", name))
    assert entry is not None
    outcome = allocate_on(entry.obj, claims, classes, state, settings)
    if isinstance(outcome, errors.AllocationInputError):
        return outcome
    if isinstance(outcome, Explanation):  # cannot happen while the verdict is current
        raise errors.TerminalError(f"node {name}: a reused verdict no longer holds")
    return name, outcome[0], None
