"""The live scheduler's framework: the plugins it can run, and the profile it runs by default.

The default profile holds the node checks a DRA pod needs (`TransitionalNodeChecks`); the
DynamicResources decision itself still runs in `_decide` around the framework's PreFilter and
Filter (docs/scheduler.md, "The framework").
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator import names
from dra_operator.controllers.scheduler.framework import Framework, PluginFactory, Profile
from dra_operator.controllers.scheduler.plugins import transitionalnodechecks

REGISTRY: Mapping[str, PluginFactory] = {
    transitionalnodechecks.NAME: transitionalnodechecks.new,
}
"""Every plugin a profile may name."""


def default_profile(scheduler_name: str = names.DEFAULT_SCHEDULER_NAME) -> Profile:
    return Profile(scheduler_name=scheduler_name, multi_point=(transitionalnodechecks.NAME,))


def default_framework(scheduler_name: str = names.DEFAULT_SCHEDULER_NAME) -> Framework:
    return Framework(default_profile(scheduler_name), REGISTRY)
