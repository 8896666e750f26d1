"""The live scheduler's framework: the plugins it can run, and the profile it runs by default.

The default profile is kube-scheduler v1.37.2's (`plugins.DEFAULT_MULTI_POINT`, upstream's order
and Score weights) built from the in-tree plugins, then every loaded hook that serves a
framework point (`_hook_plugins`), with its Score weight. DynamicResources is not in the
framework's plugin list: it is `plugins/dynamicresources`, called by `_decide` around the
framework's PreFilter, Filter and Score, since its Filter is the allocator and the node walk
runs it last and lazily (docs/scheduler.md, "The framework"). DefaultPreemption is
registered, but its PostFilter runs apart (`_preemptor`). NodeDeclaredFeatures is left out
until it is registered (`REGISTRY` gains it then).
A KubeSchedulerConfiguration file (`scheduler_config.load`) gives profiles of its own instead;
`live_profile` drops the same names from them; `check_configured` refuses one that disables
DynamicResources, which cannot be turned off.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator import names
from dra_operator.controllers.scheduler._hook_plugins import hook_plugins, hook_weights
from dra_operator.controllers.scheduler.framework import (
    EXTENSION_POINTS,
    CycleHandle,
    Framework,
    PluginFactory,
    Profile,
)
from dra_operator.controllers.scheduler.plugins import IN_TREE
from dra_operator.controllers.scheduler.plugins import default_profile as upstream_default
from dra_operator.controllers.scheduler.plugins.scheduler_config import SchedulerConfigError
from dra_operator.hooks import HookSet
from dra_operator.model import FrozenMap

DYNAMIC_RESOURCES = "DynamicResources"
"""Upstream's DRA plugin: `plugins/dynamicresources`, always on."""

REGISTRY: Mapping[str, PluginFactory] = IN_TREE
"""Every plugin a profile may name, besides the hooks' plugins."""


def check_configured(profile: Profile) -> None:
    """Refuse a configured profile (`scheduler_config.load`) the live scheduler cannot run as
    written: one that disables DynamicResources."""
    off = any(
        DYNAMIC_RESOURCES in profile.disabled.get(point, frozenset())
        for point in ("*", *EXTENSION_POINTS)
    )
    if off or DYNAMIC_RESOURCES not in profile.multi_point:
        raise SchedulerConfigError(
            f"profile {profile.scheduler_name!r}: {DYNAMIC_RESOURCES} cannot be disabled"
            " (it is the operator's own allocation)"
        )


def live_profile(profile: Profile, hooks: HookSet | None = None) -> Profile:
    """`profile` as the live scheduler runs it: without the names `REGISTRY` lacks (see the
    module docstring), with the hooks' plugins and weights appended."""
    extra = hook_plugins(hooks) if hooks is not None else {}
    kept = tuple(n for n in profile.multi_point if n in REGISTRY or n in extra)
    weights = {n: w for n, w in profile.weights.items() if n in kept}
    if hooks is not None:
        weights.update(hook_weights(hooks))
    return Profile(
        scheduler_name=profile.scheduler_name,
        multi_point=tuple(dict.fromkeys((*kept, *extra))),
        disabled=profile.disabled,
        weights=FrozenMap(weights),
        args=profile.args,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
    )


def default_profile(
    scheduler_name: str = names.DEFAULT_SCHEDULER_NAME, hooks: HookSet | None = None
) -> Profile:
    base, _ = upstream_default(scheduler_name)
    return live_profile(base, hooks)


def default_framework(
    scheduler_name: str = names.DEFAULT_SCHEDULER_NAME,
    hooks: HookSet | None = None,
    handle: CycleHandle | None = None,
    profile: Profile | None = None,
) -> Framework:
    """The framework of `profile` (default: the default profile), with the hooks' plugins when
    `hooks` are given; its plugins read and write through `handle` (the live scheduler's
    `LiveHandle`), else through a handle that knows no object besides the snapshot."""
    chosen = (
        live_profile(profile, hooks)
        if profile is not None
        else default_profile(scheduler_name, hooks)
    )
    registry = {**REGISTRY, **hook_plugins(hooks)} if hooks is not None else REGISTRY
    return Framework(chosen, registry, handle=handle)
