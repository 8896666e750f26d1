"""kube-scheduler v1.37.2's default profile: its plugins in order, with their Score weights.

pkg/scheduler/apis/config/v1/default_plugins.go (`getDefaultPlugins` and `applyFeatureGates`
with 1.37's default gates): DynamicResources goes before DefaultPreemption (DRA is GA), and
NodeDeclaredFeatures (GA in 1.37) is appended; the plugins of gates off by default
(DeferredPodScheduling, GangScheduling, TopologyAwareWorkloadScheduling) are not in it.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.controllers.scheduler.framework import PluginFactory, Profile
from dra_operator.model import FrozenMap

DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeName", None),
    ("NodeUnschedulable", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
)
"""(plugin, Score weight or None for a plugin that does not score), in upstream's order."""


def default_profile(
    scheduler_name: str, registry: Mapping[str, PluginFactory] | None = None
) -> tuple[Profile, tuple[str, ...]]:
    """The default profile, and the plugins left out of it because `registry` lacks them.

    Without `registry` every default plugin is kept (and nothing is left out); with it, a
    profile the registry can build, for running while some plugins are still missing.
    """
    kept = [(n, w) for n, w in DEFAULT_MULTI_POINT if registry is None or n in registry]
    dropped = tuple(n for n, _ in DEFAULT_MULTI_POINT if registry is not None and n not in registry)
    profile = Profile(
        scheduler_name=scheduler_name,
        multi_point=tuple(n for n, _ in kept),
        weights=FrozenMap({n: w for n, w in kept if w is not None}),
    )
    return profile, dropped
