"""The whole check: a pure function from a cluster snapshot to its violations."""

from __future__ import annotations

from dra_operator.verify._coexistence import check_coexistence
from dra_operator.verify._consumers import check_consumers
from dra_operator.verify._devices import check_devices
from dra_operator.verify._state import ClusterState, Violation

__all__ = ["check"]


def check(state: ClusterState) -> list[Violation]:
    """Every violated invariant in `state`, errors first, then by kind, object and code."""
    violations = (
        check_devices(state.claims, state.slices)
        + check_consumers(state.claims, state.pods, state.nodes)
        + check_coexistence(state.schedulers, state.pods)
    )
    # dict.fromkeys: one claim can reach the same sentence twice (two results, one device).
    unique = list(dict.fromkeys(violations))
    return sorted(unique, key=lambda v: (v.severity != "error", v.kind, v.name, v.code, v.message))
