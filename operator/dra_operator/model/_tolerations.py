"""Whether a toleration tolerates a taint: device taints (DRA) and node taints (core/v1).

Both follow the same three steps (upstream `resourceclaim.ToleratesTaint` and core/v1
`Toleration.ToleratesTaint`): an effect, if given, must equal the taint's; a key, if given, must
equal the taint's; then operator "" or Equal compares values, Exists accepts, anything else
refuses. Node tolerations additionally know Gt and Lt (alpha gate
TaintTolerationComparisonOperators), comparing decimal int64 values, taint against toleration.
"""

from __future__ import annotations

import re

from dra_operator.model._pod import Taint, Toleration
from dra_operator.model._types import DeviceTaint, DeviceToleration

_DECIMAL_INT = re.compile(r"^(0|-?[1-9][0-9]*)$")


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """A device toleration against a device taint (upstream-dra.md §1.9)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def _decimal_int64(text: str) -> int | None:
    if not _DECIMAL_INT.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def tolerates_node_taint(
    toleration: Toleration, taint: Taint, *, comparison_operators: bool = False
) -> bool:
    """A pod toleration against a node taint; Gt/Lt only when `comparison_operators` is on."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", "Equal"):
        return toleration.value == taint.value
    if op == "Exists":
        return True
    if op not in ("Gt", "Lt") or not comparison_operators:
        return False
    bound, actual = _decimal_int64(toleration.value), _decimal_int64(taint.value)
    if bound is None or actual is None:
        return False
    return actual > bound if op == "Gt" else actual < bound
