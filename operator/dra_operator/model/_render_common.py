"""JSON building blocks shared by the renderers, with the API server's omission rules.

Go's encoder drops `omitempty` fields that are empty ("" / 0 / false / nil / empty) and
`omitzero` times, but always writes struct-valued fields and non-omitempty fields, even as null.
The helpers here encode those rules once, so a parsed object renders back to the exact JSON the
server would send.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._quantity import Quantity
from dra_operator.model._types import (
    Condition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
)

Json = dict[str, Any]


def put(out: Json, name: str, value: object) -> None:
    """Set `name` unless `value` is empty in Go's omitempty sense (None, "", 0, False, [])."""
    if value is None or value is False or (type(value) is int and value == 0):
        return
    if isinstance(value, str | list | dict) and not value:
        return
    out[name] = value


def put_pointer(out: Json, name: str, value: object) -> None:
    """Set `name` for an optional pointer field: only None is omitted (false and 0 are kept)."""
    if value is not None:
        out[name] = value


def time_text(value: datetime.datetime) -> str:
    """metav1.Time: RFC 3339 in UTC, whole seconds."""
    return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def opt_time(value: datetime.datetime | None) -> str | None:
    return None if value is None else time_text(value)


def quantities(values: FrozenMap[str, Quantity]) -> dict[str, str]:
    return {name: str(q) for name, q in values.items()}


def raw_parameters(text: str) -> object:
    return json.loads(text)


def owner_reference(ref: OwnerReference) -> Json:
    out: Json = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name, "uid": ref.uid}
    put(out, "controller", ref.controller)
    put(out, "blockOwnerDeletion", ref.block_owner_deletion)
    return out


def object_meta(meta: ObjectMeta) -> Json:
    out: Json = {}
    put(out, "name", meta.name)
    put(out, "generateName", meta.generate_name)
    put(out, "namespace", meta.namespace)
    put(out, "uid", meta.uid)
    put(out, "resourceVersion", meta.resource_version)
    put(out, "generation", meta.generation)
    put(out, "creationTimestamp", opt_time(meta.creation_timestamp))
    put(out, "deletionTimestamp", opt_time(meta.deletion_timestamp))
    put(out, "labels", dict(meta.labels))
    put(out, "annotations", dict(meta.annotations))
    put(out, "ownerReferences", [owner_reference(r) for r in meta.owner_references])
    put(out, "finalizers", list(meta.finalizers))
    return out


def _requirement(req: NodeSelectorRequirement) -> Json:
    out: Json = {"key": req.key, "operator": req.operator}
    put(out, "values", list(req.values))
    return out


def _term(term: NodeSelectorTerm) -> Json:
    out: Json = {}
    put(out, "matchExpressions", [_requirement(r) for r in term.match_expressions])
    put(out, "matchFields", [_requirement(r) for r in term.match_fields])
    return out


def node_selector(selector: NodeSelector) -> Json:
    # nodeSelectorTerms has no omitempty: an empty list is written as null.
    terms = [_term(t) for t in selector.node_selector_terms]
    return {"nodeSelectorTerms": terms or None}


def opt_node_selector(selector: NodeSelector | None) -> Json | None:
    return None if selector is None else node_selector(selector)


def condition(c: Condition) -> Json:
    """metav1.Condition: reason, message and lastTransitionTime have no omitempty."""
    out: Json = {"type": c.type, "status": c.status}
    put(out, "observedGeneration", c.observed_generation)
    out["lastTransitionTime"] = opt_time(c.last_transition_time)
    out["reason"] = c.reason
    out["message"] = c.message
    return out
