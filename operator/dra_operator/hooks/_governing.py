"""AllocationPolicy objects → the allocator policy that governs a claim, and policy status.

Pure functions over parsed policies (`parse_allocation_policy` reads the raw object the API
server already validated). A policy matches a claim when each selection field it sets matches
(docs/policies.md); the most specific match (most fields set) wins, ties by name; no match
means FirstFit, upstream's behaviour. A policy naming a hook the operator did not load is
`Invalid` and governs nothing.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dra_operator.allocator import FirstFit, Policy, policy_named
from dra_operator.errors import InvalidObjectError
from dra_operator.hooks._selectors import LabelSelector, parse_label_selector
from dra_operator.model import ResourceClaim

__all__ = [
    "AllocationPolicy",
    "allocator_policy",
    "decision_policy",
    "governed_counts",
    "governing_policy",
    "parse_allocation_policy",
    "policy_status",
]

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocationPolicy:
    name: str
    generation: int
    device_class_names: frozenset[str]
    namespace_selector: LabelSelector
    claim_selector: LabelSelector
    strategy: str
    topology_attribute: str
    strategy_weight: int
    hook_weight: int
    search_steps: int | None
    search_timeout: float | None  # seconds
    hooks: tuple[str, ...]

    @property
    def specificity(self) -> int:
        """How many selection fields the policy sets (empty ones match anything)."""
        return (
            bool(self.device_class_names)
            + (not self.namespace_selector.is_empty)
            + (not self.claim_selector.is_empty)
        )

    def matches(self, claim: ResourceClaim, namespace_labels: Mapping[str, str]) -> bool:
        if self.device_class_names and not self.device_class_names & _classes_of(claim):
            return False
        if not self.namespace_selector.matches(namespace_labels):
            return False
        return self.claim_selector.matches(claim.metadata.labels)


def _classes_of(claim: ResourceClaim) -> frozenset[str]:
    found: set[str] = set()
    for request in claim.spec.requests:
        if request.exactly is not None:
            found.add(request.exactly.device_class_name)
        found.update(sub.device_class_name for sub in request.first_available)
    return frozenset(found)


def _duration(text: str, path: str) -> float:
    if not text or _DURATION_PART.sub("", text):
        raise InvalidObjectError(path, f"not a duration: {text!r}")
    return sum(float(n) * _UNIT[unit] for n, unit in _DURATION_PART.findall(text))


def parse_allocation_policy(raw: Mapping[str, Any]) -> AllocationPolicy:
    """Reads an AllocationPolicy object; raises InvalidObjectError naming the field."""
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    scoring = spec.get("nodeScoring") or {}
    budget = spec.get("searchBudget") or {}
    timeout = budget.get("timeout")
    return AllocationPolicy(
        name=str(meta.get("name", "")),
        generation=int(meta.get("generation") or 0),
        device_class_names=frozenset(spec.get("deviceClassNames") or ()),
        namespace_selector=parse_label_selector(
            spec.get("namespaceSelector") or {}, "spec.namespaceSelector"
        ),
        claim_selector=parse_label_selector(spec.get("claimSelector") or {}, "spec.claimSelector"),
        strategy=str(spec.get("strategy") or "FirstFit"),
        topology_attribute=str(spec.get("topologyAttribute") or ""),
        strategy_weight=int(scoring.get("strategyWeight", 1)),
        hook_weight=int(scoring.get("hookWeight", 1)),
        search_steps=int(budget["steps"]) if "steps" in budget else None,
        search_timeout=None if timeout is None else _duration(timeout, "spec.searchBudget.timeout"),
        hooks=tuple(spec.get("hooks") or ()),
    )


def _problem(policy: AllocationPolicy, known_hooks: frozenset[str]) -> str:
    """Why the operator cannot use the policy ("" when it can)."""
    unknown = [name for name in policy.hooks if name not in known_hooks]
    if unknown:
        return f"unknown hooks: {', '.join(unknown)} (not loaded by the operator)"
    try:
        policy_named(policy.strategy, attribute=policy.topology_attribute)
    except Exception as exc:  # the API server's rules normally refuse this already
        return str(exc)
    return ""


def governing_policy(
    policies: Iterable[AllocationPolicy],
    claim: ResourceClaim,
    namespace_labels: Mapping[str, str],
    known_hooks: frozenset[str] = frozenset(),
) -> AllocationPolicy | None:
    """The valid matching policy with the most selection fields set, ties by name; or None."""
    best: AllocationPolicy | None = None
    for policy in policies:
        if _problem(policy, known_hooks) or not policy.matches(claim, namespace_labels):
            continue
        if best is None or (-policy.specificity, policy.name) < (-best.specificity, best.name):
            best = policy
    return best


def decision_policy(
    policies: Sequence[AllocationPolicy],
    claims: Iterable[ResourceClaim],
    namespace_labels: Callable[[str], Mapping[str, str]],
    known_hooks: frozenset[str] = frozenset(),
) -> AllocationPolicy | None:
    """The one policy for claims allocated together: the most specific of their winners.

    Each claim's own winner is `governing_policy`; among them again the most selection fields
    set, ties by name. None when no policy governs any of them.
    """
    if not policies:
        return None
    best: AllocationPolicy | None = None
    for claim in claims:
        labels = namespace_labels(claim.metadata.namespace)
        won = governing_policy(policies, claim, labels, known_hooks)
        if won is not None and (
            best is None or (-won.specificity, won.name) < (-best.specificity, best.name)
        ):
            best = won
    return best


def allocator_policy(policy: AllocationPolicy | None) -> Policy:
    """The allocator strategy of a governing policy; FirstFit when none governs."""
    if policy is None:
        return FirstFit()
    return policy_named(policy.strategy, attribute=policy.topology_attribute)


def governed_counts(
    policies: Sequence[AllocationPolicy],
    claims: Iterable[ResourceClaim],
    namespaces: Mapping[str, Mapping[str, str]],
    known_hooks: frozenset[str] = frozenset(),
) -> dict[str, int]:
    """Per policy name, how many of `claims` it governs (namespaces: name → labels)."""
    counts = {policy.name: 0 for policy in policies}
    for claim in claims:
        labels = namespaces.get(claim.metadata.namespace or "", {})
        winner = governing_policy(policies, claim, labels, known_hooks)
        if winner is not None:
            counts[winner.name] += 1
    return counts


def policy_status(
    policy: AllocationPolicy,
    *,
    governed: int,
    known_hooks: frozenset[str],
    now: datetime.datetime,
    previous: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The status to write: Accepted xor Invalid, transition times kept while unchanged."""
    problem = _problem(policy, known_hooks)
    wanted = {
        "Accepted": ("False", "Invalid", problem) if problem else ("True", "Accepted", ""),
        "Invalid": ("True", "Invalid", problem) if problem else ("False", "Accepted", ""),
    }
    before = {str(c.get("type")): c for c in previous}
    conditions = []
    for kind, (status, reason, message) in wanted.items():
        old = before.get(kind)
        stamp = (
            old["lastTransitionTime"]
            if old is not None and old.get("status") == status and "lastTransitionTime" in old
            else now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
        conditions.append(
            {
                "type": kind,
                "status": status,
                "observedGeneration": policy.generation,
                "lastTransitionTime": stamp,
                "reason": reason,
                "message": message,
            }
        )
    return {
        "observedGeneration": policy.generation,
        "governedClaims": 0 if problem else governed,
        "conditions": conditions,
    }
