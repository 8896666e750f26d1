"""The scheduler configuration file: a KubeSchedulerConfiguration (v1) subset → `Profile`s.

Supported, with kube-scheduler v1.37.2's meaning (pkg/scheduler/apis/config/v1, defaults.go and
default_plugins.go `mergePlugins`; framework/runtime `expandMultiPointPlugins`): `profiles[]`
with `schedulerName`, `percentageOfNodesToScore` (also top-level), `plugins` (`multiPoint` and
each extension point, `enabled` with `weight` and `disabled`, `"*"` included) merged onto the
default profile, and `pluginConfig[].args`. Anything else is refused with the file, the field
path and what is supported, rather than silently ignored.

One difference of representation: a `Profile` keeps one plugin order for all points. When
per-point `enabled` lists would order plugins differently at two points where order matters
(everything but preScore and score), the file is refused as unsupported.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from dra_operator.controllers.scheduler.framework import EXTENSION_POINTS, PluginFactory, Profile
from dra_operator.controllers.scheduler.plugins._default import default_profile
from dra_operator.model import FrozenMap

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

_TOP = ("apiVersion", "kind", "profiles", "percentageOfNodesToScore")
_PROFILE = ("schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore")
_POINTS = ("multiPoint", *EXTENSION_POINTS)
_SET = ("enabled", "disabled")
_PLUGIN = ("name", "weight")
_PLUGIN_CONFIG = ("name", "args")
_ORDER_FREE = frozenset({"preScore", "score"})
"""Points whose plugin order does not change the outcome (scores are summed)."""


class SchedulerConfigError(ValueError):
    """The configuration file is malformed or uses something this scheduler does not support."""


@dataclass(frozen=True, slots=True)
class _Enabled:
    name: str
    weight: int | None


class _Reader:
    """Typed access to the parsed file, raising errors that name the file and field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> SchedulerConfigError:
        return SchedulerConfigError(f"{self.source}: {path}: {message}")

    def any_object(self, value: object, path: str) -> Mapping[str, object]:
        """Any object: plugin args, whose fields each plugin's factory checks."""
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected an object, got {type(value).__name__}")
        return value

    def mapping(self, value: object, path: str, known: Sequence[str]) -> Mapping[str, object]:
        """An object with only the `known` fields."""
        value = self.any_object(value, path)
        unknown = sorted(str(k) for k in value if k not in known)
        if unknown:
            raise self.fail(
                path,
                f"unsupported field(s) {', '.join(unknown)}; supported: {', '.join(known)}",
            )
        return value

    def items(self, value: object, path: str) -> Sequence[object]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type(value).__name__}")
        return value

    def string(self, value: object, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, "expected a non-empty string")
        return value

    def percentage(self, value: object, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
            raise self.fail(path, "expected an integer from 0 to 100")
        return value

    def plugin_set(self, value: object, path: str) -> tuple[tuple[_Enabled, ...], frozenset[str]]:
        raw = self.mapping(value or {}, path, _SET)
        enabled: list[_Enabled] = []
        for i, item in enumerate(self.items(raw.get("enabled"), f"{path}.enabled")):
            p = f"{path}.enabled[{i}]"
            plugin = self.mapping(item, p, _PLUGIN)
            name = self.string(plugin.get("name"), f"{p}.name")
            weight = plugin.get("weight")
            if weight is not None and (
                isinstance(weight, bool) or not isinstance(weight, int) or weight < 0
            ):
                raise self.fail(f"{p}.weight", "expected a non-negative integer")
            if any(e.name == name for e in enabled):
                raise self.fail(f"{p}.name", f"plugin {name!r} is enabled twice")
            enabled.append(_Enabled(name, weight))
        disabled = frozenset(
            self.string(
                self.mapping(item, f"{path}.disabled[{i}]", ("name",)).get("name"),
                f"{path}.disabled[{i}].name",
            )
            for i, item in enumerate(self.items(raw.get("disabled"), f"{path}.disabled"))
        )
        return tuple(enabled), disabled


def _merge(
    defaults: Sequence[_Enabled], enabled: Sequence[_Enabled], disabled: frozenset[str]
) -> list[_Enabled]:
    """`mergePluginSet`: defaults minus disabled ("*": all), reconfigured in place, then new."""
    custom = {e.name: e for e in enabled}
    merged = (
        []
        if "*" in disabled
        else [custom.get(d.name, d) for d in defaults if d.name not in disabled]
    )
    seen = {e.name for e in merged}
    merged.extend(e for e in enabled if e.name not in seen)
    return merged


def _point_list(
    multi_point: Sequence[str], enabled: Sequence[str], disabled: frozenset[str]
) -> list[str]:
    """`expandMultiPointPlugins` for one point (before dropping plugins that lack the point)."""
    if "*" in disabled:
        return list(enabled)
    overrides = [e for e in enabled if e in multi_point and e not in disabled]
    rest = [m for m in multi_point if m not in disabled and m not in enabled]
    return [*overrides, *rest, *(e for e in enabled if e not in overrides)]


def _one_order(preferred: Sequence[str], lists: Mapping[str, Sequence[str]]) -> list[str] | None:
    """An order of `preferred` keeping every list's order, closest to `preferred`; or None."""
    rank = {name: i for i, name in enumerate(preferred)}
    after: dict[str, set[str]] = {name: set() for name in preferred}
    before_count = dict.fromkeys(preferred, 0)
    for names in lists.values():
        for a, b in itertools.pairwise(names):
            if b not in after[a]:
                after[a].add(b)
                before_count[b] += 1
    ready = [(rank[n], n) for n, c in before_count.items() if c == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for nxt in after[name]:
            before_count[nxt] -= 1
            if before_count[nxt] == 0:
                heapq.heappush(ready, (rank[nxt], nxt))
    return order if len(order) == len(preferred) else None


def _profile(
    reader: _Reader,
    raw: Mapping[str, object],
    path: str,
    default_percentage: int | None,
    registry: Mapping[str, PluginFactory] | None,
) -> Profile:
    name = raw.get("schedulerName")
    scheduler_name = (
        DEFAULT_SCHEDULER_NAME if name is None else reader.string(name, f"{path}.schedulerName")
    )
    base, _ = default_profile(scheduler_name)
    defaults = [_Enabled(n, base.weights.get(n)) for n in base.multi_point]
    plugins = reader.mapping(raw.get("plugins") or {}, f"{path}.plugins", _POINTS)
    sets = {
        point: reader.plugin_set(plugins.get(point), f"{path}.plugins.{point}") for point in _POINTS
    }
    if registry is not None:
        for point, (enabled, _) in sets.items():
            for i, e in enumerate(enabled):
                if e.name not in registry:
                    raise reader.fail(
                        f"{path}.plugins.{point}.enabled[{i}].name",
                        f"no plugin {e.name!r}; known: {', '.join(sorted(registry))}",
                    )
    multi = _merge(defaults, *sets["multiPoint"])
    multi_names = [e.name for e in multi]
    lists = {
        point: _point_list(multi_names, [e.name for e in sets[point][0]], sets[point][1])
        for point in EXTENSION_POINTS
    }
    extras = [n for point in EXTENSION_POINTS for n in lists[point] if n not in multi_names]
    preferred = list(dict.fromkeys([*multi_names, *extras]))
    order = _one_order(preferred, {p: ns for p, ns in lists.items() if p not in _ORDER_FREE})
    if order is None:
        raise reader.fail(
            f"{path}.plugins",
            "the per-point enabled lists order plugins differently at different extension"
            " points; supported: one order for all points except preScore and score",
        )
    disabled = {
        point: frozenset(n for n in order if n not in lists[point])
        for point in EXTENSION_POINTS
        if any(n not in lists[point] for n in order)
    }
    weights: dict[str, int] = {}
    for e in (*sets["score"][0], *multi):
        if e.name not in weights and e.weight is not None:
            weights[e.name] = e.weight or 1
    return Profile(
        scheduler_name=scheduler_name,
        multi_point=tuple(order),
        disabled=FrozenMap(disabled),
        weights=FrozenMap(weights),
        args=FrozenMap(_plugin_config(reader, raw.get("pluginConfig"), f"{path}.pluginConfig")),
        percentage_of_nodes_to_score=_percentage(
            reader.percentage(
                raw.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore"
            ),
            default_percentage,
        ),
    )


def _percentage(own: int | None, default: int | None) -> int | None:
    """A profile's value wins over the top-level one; 0 means upstream's adaptive default."""
    value = own if own is not None else default
    return value or None


def _plugin_config(reader: _Reader, value: object, path: str) -> dict[str, Mapping[str, object]]:
    configs: dict[str, Mapping[str, object]] = {}
    for i, item in enumerate(reader.items(value, path)):
        p = f"{path}[{i}]"
        raw = reader.mapping(item, p, _PLUGIN_CONFIG)
        name = reader.string(raw.get("name"), f"{p}.name")
        if name in configs:
            raise reader.fail(f"{p}.name", f"a second pluginConfig for {name!r}")
        args = dict(reader.any_object(raw.get("args") or {}, f"{p}.args"))
        kind = args.pop("kind", None)
        if kind is not None and kind != f"{name}Args":
            raise reader.fail(f"{p}.args.kind", f"expected {name}Args, got {kind!r}")
        version = args.pop("apiVersion", None)
        if version is not None and version != API_VERSION:
            raise reader.fail(f"{p}.args.apiVersion", f"supported: {API_VERSION}")
        configs[name] = args
    return configs


def parse(
    document: object,
    source: str,
    registry: Mapping[str, PluginFactory] | None = None,
) -> tuple[Profile, ...]:
    """The profiles of a parsed KubeSchedulerConfiguration; `source` names it in errors."""
    reader = _Reader(source)
    top = reader.mapping(document, "(top level)", _TOP)
    if top.get("apiVersion") != API_VERSION:
        raise reader.fail("apiVersion", f"supported: {API_VERSION}")
    if top.get("kind") != KIND:
        raise reader.fail("kind", f"supported: {KIND}")
    default_percentage = reader.percentage(
        top.get("percentageOfNodesToScore"), "percentageOfNodesToScore"
    )
    raw_profiles = reader.items(top.get("profiles"), "profiles") or [{}]
    profiles: list[Profile] = []
    for i, raw in enumerate(raw_profiles):
        path = f"profiles[{i}]"
        profile = _profile(
            reader, reader.mapping(raw, path, _PROFILE), path, default_percentage, registry
        )
        if any(p.scheduler_name == profile.scheduler_name for p in profiles):
            raise reader.fail(
                f"{path}.schedulerName", f"duplicate scheduler name {profile.scheduler_name!r}"
            )
        profiles.append(profile)
    return tuple(profiles)


def load(
    path: Path | str, registry: Mapping[str, PluginFactory] | None = None
) -> tuple[Profile, ...]:
    """Read a KubeSchedulerConfiguration file (YAML or JSON).

    With `registry`, a plugin the file enables by name must be registered there; the plugins of
    the default profile are not checked (a partial build may lack some, see `default_profile`).
    """
    file = Path(path)
    try:
        document = yaml.safe_load(file.read_text())
    except OSError as e:
        raise SchedulerConfigError(f"{file}: cannot read: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise SchedulerConfigError(f"{file}: not YAML: {e}") from e
    return parse(document, str(file), registry)
