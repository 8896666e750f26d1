"""The whole check: a pure function from a cluster snapshot to its violations."""

from __future__ import annotations

from dra_operator.verify._coexistence import check_coexistence, check_unrouted
from dra_operator.verify._consumers import check_consumers
from dra_operator.verify._devices import check_devices
from dra_operator.verify._named import check_named
from dra_operator.verify._state import ClusterState, Violation

__all__ = ["check"]


def check(state: ClusterState) -> list[Violation]:
    """Every violated invariant in `state`, errors first, then by kind, object and code.

    v1alpha2 claims (1.27-1.30: they name a ResourceClass) hold no devices of a v1 slice;
    1.30's named instances are checked against 1.30's slices instead."""
    violations = (
        check_devices([c for c in state.claims if not c.resource_class_name], state.slices)
        + check_named(state.named_claims, state.named_slices)
        + check_consumers(state.claims, state.pods, state.nodes, state.pod_groups)
        + check_coexistence(state.schedulers, state.pods)
        + check_unrouted(state.schedulers, state.pods, state.classes, state.nodes)
    )
    # dict.fromkeys: one claim can reach the same sentence twice (two results, one device).
    unique = list(dict.fromkeys(violations))
    return sorted(unique, key=lambda v: (v.severity != "error", v.kind, v.name, v.code, v.message))
