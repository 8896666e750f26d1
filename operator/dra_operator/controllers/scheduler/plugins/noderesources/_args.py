"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs, defaulted and validated.

kube-scheduler v1.37.2, pkg/scheduler/apis/config/v1/defaults.go and
validation/validation_pluginargs.go: the default strategy is LeastAllocated over cpu and
memory with weight 1; a weight of 0 means 1; weights are 1-100; RequestedToCapacityRatio needs
a shape of increasing utilizations (0-100) with scores 0-10.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dra_operator.controllers.scheduler.plugins._args import (
    PluginArgsError,
    as_int,
    as_list,
    as_mapping,
    as_str,
    check_known,
    str_list,
)
from dra_operator.controllers.scheduler.plugins.noderesources._scoring import (
    MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec,
)
from dra_operator.model import is_label_key

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class FitArgs:
    ignored_resources: frozenset[str]
    ignored_resource_groups: frozenset[str]
    strategy: str
    resources: tuple[ResourceSpec, ...]
    shape: tuple[tuple[int, int], ...]  # RequestedToCapacityRatio's (utilization, score)


def _resources(value: object, path: str, *, weight_must_be_one: bool) -> tuple[ResourceSpec, ...]:
    if value is None:
        return DEFAULT_RESOURCES
    items = as_list(value, path)
    if not items:
        return DEFAULT_RESOURCES
    specs: list[ResourceSpec] = []
    for i, item in enumerate(items):
        p = f"{path}[{i}]"
        raw = as_mapping(item, p)
        check_known(raw, p, ("name", "weight"))
        name = as_str(raw.get("name", ""), f"{p}.name")
        weight = as_int(raw.get("weight", 0), f"{p}.weight") or 1
        if any(s.name == name for s in specs):
            raise PluginArgsError(f"{p}.name: duplicate value {name!r}")
        if weight_must_be_one and weight != 1:
            raise PluginArgsError(f"{p}.weight: must be 1, got {weight}")
        if not 0 < weight <= 100:
            raise PluginArgsError(f"{p}.weight: resource weight of {name} not in range (0, 100]")
        specs.append(ResourceSpec(name, weight))
    return tuple(specs)


def _shape(value: object, path: str) -> tuple[tuple[int, int], ...]:
    points = as_list(value, path)
    if not points:
        raise PluginArgsError(f"{path}: at least one point must be specified")
    shape: list[tuple[int, int]] = []
    for i, point in enumerate(points):
        p = f"{path}[{i}]"
        raw = as_mapping(point, p)
        check_known(raw, p, ("utilization", "score"))
        util = as_int(raw.get("utilization", 0), f"{p}.utilization")
        score = as_int(raw.get("score", 0), f"{p}.score")
        if shape and shape[-1][0] >= util:
            raise PluginArgsError(f"{p}.utilization: values must be sorted in increasing order")
        if not 0 <= util <= 100:
            raise PluginArgsError(f"{p}.utilization: {util} not in range [0, 100]")
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise PluginArgsError(
                f"{p}.score: {score} not in range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
        shape.append((util, score))
    return tuple(shape)


def fit_args(args: Mapping[str, object]) -> FitArgs:
    check_known(args, "args", ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"))
    ignored = str_list(args, "ignoredResources", "args")
    for i, name in enumerate(ignored):
        if not is_label_key(name):
            raise PluginArgsError(f"args.ignoredResources[{i}]: {name!r} is not a qualified name")
    groups = str_list(args, "ignoredResourceGroups", "args")
    for i, group in enumerate(groups):
        if "/" in group or not is_label_key(group):
            raise PluginArgsError(
                f"args.ignoredResourceGroups[{i}]: {group!r} is not a resource group name"
            )
    path = "args.scoringStrategy"
    raw = as_mapping(args.get("scoringStrategy") or {}, path)
    check_known(raw, path, ("type", "resources", "requestedToCapacityRatio"))
    strategy = as_str(raw.get("type") or LEAST_ALLOCATED, f"{path}.type")
    if strategy not in STRATEGIES:
        raise PluginArgsError(
            f"{path}.type: unsupported value {strategy!r}; supported: {', '.join(STRATEGIES)}"
        )
    resources = _resources(raw.get("resources"), f"{path}.resources", weight_must_be_one=False)
    ratio = raw.get("requestedToCapacityRatio")
    shape: tuple[tuple[int, int], ...] = ()
    rtcr_path = f"{path}.requestedToCapacityRatio"
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        if ratio is None:
            raise PluginArgsError(f"{rtcr_path}: required when type is {strategy}")
        ratio_raw = as_mapping(ratio, rtcr_path)
        check_known(ratio_raw, rtcr_path, ("shape",))
        shape = _shape(ratio_raw.get("shape") or [], f"{rtcr_path}.shape")
    elif ratio is not None:
        raise PluginArgsError(f"{rtcr_path}: must be unset when type is {strategy}")
    return FitArgs(frozenset(ignored), frozenset(groups), strategy, resources, shape)


def balanced_allocation_resources(args: Mapping[str, object]) -> tuple[ResourceSpec, ...]:
    check_known(args, "args", ("resources",))
    return _resources(args.get("resources"), "args.resources", weight_must_be_one=True)
