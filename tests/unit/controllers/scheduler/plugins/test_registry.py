"""The in-tree registry and kube-scheduler v1.37.2's default profile."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import (
    FilterPlugin,
    PreEnqueuePlugin,
    QueueSortPlugin,
    ScorePlugin,
)
from dra_operator.controllers.scheduler.plugins import (
    IN_TREE,
    UnknownPluginError,
    default_profile,
    factories,
)

from .builders import FakeHandle

MINE = (
    "SchedulingGates",
    "PrioritySort",
    "NodeName",
    "NodeUnschedulable",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
)


@pytest.mark.parametrize("name", MINE)
def test_each_registered_factory_builds_its_plugin_with_default_args(name: str) -> None:
    plugin = IN_TREE[name]({}, FakeHandle())
    assert plugin.name == name


def test_plugins_serve_the_points_upstream_gives_them() -> None:
    handle = FakeHandle()
    built = {name: IN_TREE[name]({}, handle) for name in MINE}
    assert isinstance(built["SchedulingGates"], PreEnqueuePlugin)
    assert isinstance(built["PrioritySort"], QueueSortPlugin)
    scorers = {n for n, p in built.items() if isinstance(p, ScorePlugin)}
    assert scorers == {
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }
    filters = {n for n, p in built.items() if isinstance(p, FilterPlugin)}
    assert filters == {
        "NodeName",
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    }


def test_the_default_profile_of_v1_37_2() -> None:
    profile, dropped = default_profile("default-scheduler")
    assert dropped == ()
    assert profile.scheduler_name == "default-scheduler"
    assert profile.multi_point == (
        "SchedulingGates",
        "PrioritySort",
        "NodeName",
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
        "NodeDeclaredFeatures",
    )
    assert dict(profile.weights) == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }


def test_a_partial_default_profile_names_what_it_left_out() -> None:
    registry = {name: IN_TREE[name] for name in MINE}
    profile, dropped = default_profile("dra-operator", registry)
    assert profile.multi_point == MINE
    assert dropped == (
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "DefaultPreemption",
        "NodeDeclaredFeatures",
    )
    assert set(profile.weights) == {
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }
    assert list(factories(profile, registry)) == list(MINE)


def test_a_profile_naming_an_unregistered_plugin_is_refused() -> None:
    profile, _ = default_profile("default-scheduler")
    with pytest.raises(UnknownPluginError, match="enables plugin\\(s\\) VolumeRestrictions"):
        factories(profile, {name: IN_TREE[name] for name in MINE})
