"""Kubernetes label selectors (`matchLabels` and `matchExpressions`), as AllocationPolicy uses them.

Semantics of apimachinery's `LabelSelectorAsSelector`: every term must hold; an empty selector
matches everything; `NotIn` and `DoesNotExist` hold for a missing key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dra_operator.errors import InvalidObjectError

__all__ = ["LabelSelector", "parse_label_selector"]

_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(term.matches(labels) for term in self.requirements)


def parse_label_selector(raw: Any, path: str) -> LabelSelector:
    """Raises InvalidObjectError with the field path for a malformed selector."""
    if not isinstance(raw, dict):
        raise InvalidObjectError(path, "expected an object")
    terms = [
        Requirement(key=str(key), operator="In", values=frozenset({str(value)}))
        for key, value in sorted((raw.get("matchLabels") or {}).items())
    ]
    for index, expr in enumerate(raw.get("matchExpressions") or ()):
        where = f"{path}.matchExpressions[{index}]"
        operator = expr.get("operator") if isinstance(expr, dict) else None
        if operator not in _OPERATORS:
            raise InvalidObjectError(f"{where}.operator", f"unsupported operator {operator!r}")
        values = frozenset(str(v) for v in expr.get("values") or ())
        if operator in ("In", "NotIn") and not values:
            raise InvalidObjectError(f"{where}.values", "must be specified for In and NotIn")
        if operator in ("Exists", "DoesNotExist") and values:
            raise InvalidObjectError(
                f"{where}.values", "may not be specified for Exists and DoesNotExist"
            )
        terms.append(Requirement(key=str(expr.get("key", "")), operator=operator, values=values))
    return LabelSelector(requirements=tuple(terms))
