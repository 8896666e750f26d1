"""kube-scheduler's plugins, one module each, named as upstream's plugin folders.

`IN_TREE` maps each plugin name to its factory (`new(args, handle)`); a profile may name only
plugins found there (`factories` says which are missing). `default_profile` is kube-scheduler
v1.37.2's default profile, and `scheduler_config.load` reads a KubeSchedulerConfiguration.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.controllers.scheduler.framework import PluginFactory, Profile
from dra_operator.controllers.scheduler.plugins import (
    defaultbinder,
    defaultpreemption,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    nodevolumelimits,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from dra_operator.controllers.scheduler.plugins._args import PluginArgsError
from dra_operator.controllers.scheduler.plugins._default import (
    DEFAULT_MULTI_POINT,
    default_profile,
)
from dra_operator.controllers.scheduler.plugins.noderesources import balanced_allocation, fit

IN_TREE: Mapping[str, PluginFactory] = {
    module.NAME: module.new
    for module in (
        schedulinggates,
        queuesort,
        nodename,
        nodeunschedulable,
        tainttoleration,
        nodeaffinity,
        nodeports,
        fit,
        volumerestrictions,
        nodevolumelimits,
        volumebinding,
        volumezone,
        podtopologyspread,
        interpodaffinity,
        defaultpreemption,
        balanced_allocation,
        imagelocality,
        defaultbinder,
    )
}
"""Every plugin this package implements, by its upstream name."""


class UnknownPluginError(LookupError):
    """A profile enables a plugin that no factory is registered for."""


def factories(
    profile: Profile, registry: Mapping[str, PluginFactory] = IN_TREE
) -> dict[str, PluginFactory]:
    """The factory of each plugin `profile` enables, in its order; fails on an unknown one."""
    missing = [name for name in profile.multi_point if name not in registry]
    if missing:
        raise UnknownPluginError(
            f"profile {profile.scheduler_name!r} enables plugin(s) {', '.join(missing)} that are"
            f" not registered; registered: {', '.join(sorted(registry))}"
        )
    return {name: registry[name] for name in profile.multi_point}


__all__ = [
    "DEFAULT_MULTI_POINT",
    "IN_TREE",
    "PluginArgsError",
    "UnknownPluginError",
    "default_profile",
    "factories",
]
