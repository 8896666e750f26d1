"""Test plugins for the runtime: each point's behaviour given as a function, calls recorded.

A plugin implements exactly the points it is given behaviour for (the runtime finds the points
by the methods present), so one `make` call builds a Filter-only plugin, a PreFilter+Filter
plugin, a Score plugin with or without NormalizeScore, and so on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    PluginFactory,
    PostFilterResult,
    PreFilterResult,
    Profile,
    Status,
)
from dra_operator.model import FrozenMap, Node, ObjectMeta, Pod

Calls = list[tuple[str, str, str]]  # (point, plugin, node or "")

_POINTS = (
    "pre_enqueue",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "normalize",
    "reserve",
    "permit",
    "pre_bind",
    "bind",
    "sign",
)


def make(name: str, calls: Calls, **behaviour: Callable[..., Any]) -> PluginFactory:
    """A factory for plugin `name` with the given points (keys of `_POINTS`)."""
    unknown = set(behaviour) - set(_POINTS)
    assert not unknown, unknown
    namespace: dict[str, Any] = {}

    def method(point: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: Any, state: CycleState, pod: Pod, *rest: Any) -> Any:
            where = rest[0] if rest and isinstance(rest[0], str) else ""
            if rest and isinstance(rest[0], NodeInfo):
                where = rest[0].name
            calls.append((point, name, where))
            return fn(*rest)

        return run

    for point, fn in behaviour.items():
        if point == "pre_enqueue":
            namespace["pre_enqueue"] = lambda self, pod, fn=fn: fn(pod)
        elif point == "sign":
            namespace["sign_pod"] = lambda self, pod, fn=fn: fn(pod)
        elif point == "normalize":
            continue
        elif point in ("pre_bind", "bind"):
            sync = method(point, fn)

            async def run_async(self: Any, *args: Any, sync: Any = sync) -> Status:
                result: Status = sync(self, *args)
                return result

            namespace[point] = run_async
        else:
            namespace[point] = method(point, fn)
    if "pre_filter" in behaviour:
        namespace["pre_filter_extensions"] = lambda self: None
    if "score" in behaviour:
        normalize = behaviour.get("normalize")
        namespace["score_extensions"] = lambda self: self if normalize is not None else None
        if normalize is not None:
            namespace["normalize_score"] = lambda self, state, pod, scores: normalize(scores)
    if "reserve" in behaviour:
        namespace["unreserve"] = lambda self, state, pod, node: calls.append(
            ("unreserve", name, node)
        )
    namespace["name"] = name
    cls = type(f"Plugin{name}", (), namespace)

    def factory(args: Mapping[str, object], handle: Handle) -> Any:
        plugin = cls()
        plugin.args = args
        plugin.handle = handle
        return plugin

    return factory


def profile(*names: str, **kwargs: Any) -> Profile:
    return Profile(scheduler_name="test", multi_point=names, **kwargs)


def nodes(*names: str) -> list[Node]:
    return [Node(metadata=ObjectMeta(name=n, labels=FrozenMap({"name": n}))) for n in names]


def pod(name: str = "p") -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"))


def ok(*_: Any) -> Status:
    return SUCCESS


def prefilter_ok(*_: Any) -> tuple[PreFilterResult | None, Status]:
    return None, SUCCESS


def narrow(*names: str) -> Callable[..., tuple[PreFilterResult | None, Status]]:
    return lambda *_: (PreFilterResult(frozenset(names)), SUCCESS)


def reject_on(status: Status, *names: str) -> Callable[[NodeInfo], Status]:
    return lambda node: status if node.name in names else SUCCESS


def score_by(table: Mapping[str, int]) -> Callable[[NodeInfo], tuple[int, Status]]:
    return lambda node: (table.get(node.name, 0), SUCCESS)


def post_filter(
    status: Status, nominated: str = ""
) -> Callable[..., tuple[PostFilterResult | None, Status]]:
    return lambda *_: (PostFilterResult(nominated) if nominated else None, status)


def scaled(scores: Sequence[NodeScore]) -> Status:
    """A NormalizeScore that maps the highest raw score to 100."""
    top = max((s.score for s in scores), default=0) or 1
    for entry in scores:
        entry.score = entry.score * 100 // top
    return SUCCESS
