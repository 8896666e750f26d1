"""The live scheduler's framework: the plugins it can run, and the profile it runs by default.

The default profile holds the node checks a DRA pod needs (`TransitionalNodeChecks`), then every
loaded hook that serves a framework point (`_hook_plugins`), with its Score weight. The
DynamicResources decision itself still runs in `_decide` around the framework's PreFilter,
Filter and Score (docs/scheduler.md, "The framework").
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator import names
from dra_operator.controllers.scheduler._hook_plugins import hook_plugins, hook_weights
from dra_operator.controllers.scheduler.framework import (
    CycleHandle,
    Framework,
    PluginFactory,
    Profile,
)
from dra_operator.controllers.scheduler.plugins import transitionalnodechecks
from dra_operator.hooks import HookSet
from dra_operator.model import FrozenMap

REGISTRY: Mapping[str, PluginFactory] = {
    transitionalnodechecks.NAME: transitionalnodechecks.new,
}
"""Every plugin a profile may name."""


def default_profile(
    scheduler_name: str = names.DEFAULT_SCHEDULER_NAME, hooks: HookSet | None = None
) -> Profile:
    plugins = tuple(hook_plugins(hooks)) if hooks is not None else ()
    return Profile(
        scheduler_name=scheduler_name,
        multi_point=(transitionalnodechecks.NAME, *plugins),
        weights=FrozenMap(hook_weights(hooks) if hooks is not None else {}),
    )


def default_framework(
    scheduler_name: str = names.DEFAULT_SCHEDULER_NAME,
    hooks: HookSet | None = None,
    handle: CycleHandle | None = None,
) -> Framework:
    """The default profile's framework, with the hooks' plugins when `hooks` are given; its
    plugins read and write through `handle` (the live scheduler's `LiveHandle`), else through
    a handle that knows no object besides the snapshot."""
    registry = {**REGISTRY, **hook_plugins(hooks)} if hooks is not None else REGISTRY
    return Framework(default_profile(scheduler_name, hooks), registry, handle=handle)
