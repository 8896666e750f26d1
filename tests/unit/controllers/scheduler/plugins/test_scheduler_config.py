"""The KubeSchedulerConfiguration loader: upstream's merge onto the default profile, and clear
errors (file, field path, what is supported) for everything else."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dra_operator.controllers.scheduler.plugins import IN_TREE, default_profile
from dra_operator.controllers.scheduler.plugins.scheduler_config import (
    SchedulerConfigError,
    load,
)

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
DEFAULT, _ = default_profile("default-scheduler")


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(HEAD + textwrap.dedent(body))
    return path


def test_no_profiles_means_the_default_profile(tmp_path: Path) -> None:
    (profile,) = load(write(tmp_path, ""))
    assert profile == DEFAULT


def test_profile_names_weights_and_percentage(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        percentageOfNodesToScore: 40
        profiles:
        - schedulerName: dra-operator
          plugins:
            multiPoint:
              enabled:
              - name: ImageLocality
                weight: 5
              - name: NodeResourcesFit
                weight: 0
        - schedulerName: other
          percentageOfNodesToScore: 0
        """,
    )
    first, second = load(path)
    assert first.scheduler_name == "dra-operator"
    assert first.multi_point == DEFAULT.multi_point  # reconfigured in place
    assert (first.weight("ImageLocality"), first.weight("NodeResourcesFit")) == (5, 1)
    assert first.weight("TaintToleration") == 3
    assert first.percentage_of_nodes_to_score == 40
    assert (second.scheduler_name, second.percentage_of_nodes_to_score) == ("other", None)


def test_disabling_everything_keeps_only_what_is_enabled(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        profiles:
        - schedulerName: minimal
          plugins:
            multiPoint:
              disabled: [{name: "*"}]
              enabled: [{name: PrioritySort}, {name: NodeResourcesFit}, {name: DefaultBinder}]
        """,
    )
    (profile,) = load(path, IN_TREE)
    assert profile.multi_point == ("PrioritySort", "NodeResourcesFit", "DefaultBinder")
    assert profile.enabled_at("filter") == profile.multi_point


def test_per_point_disabled_and_score_weight(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        profiles:
        - plugins:
            score:
              enabled: [{name: NodeResourcesBalancedAllocation, weight: 7}]
              disabled: [{name: ImageLocality}]
            filter:
              disabled: [{name: NodePorts}]
        """,
    )
    (profile,) = load(path)
    assert profile.multi_point == DEFAULT.multi_point
    assert "ImageLocality" not in profile.enabled_at("score")
    assert "ImageLocality" in profile.enabled_at("filter")
    assert "NodePorts" not in profile.enabled_at("filter")
    assert "NodePorts" in profile.enabled_at("preFilter")
    # a Score weight given at the score point wins over the multiPoint one
    assert profile.weight("NodeResourcesBalancedAllocation") == 7


def test_a_plugin_enabled_at_one_point_only(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        profiles:
        - plugins:
            multiPoint:
              disabled: [{name: NodePorts}]
            filter:
              enabled: [{name: NodePorts}]
        """,
    )
    (profile,) = load(path)
    assert profile.enabled_at("filter")[-1] == "NodePorts"
    assert "NodePorts" not in profile.enabled_at("preFilter")


def test_all_disabled_at_one_point(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        profiles:
        - plugins:
            score:
              disabled: [{name: "*"}]
              enabled: [{name: NodeAffinity, weight: 4}]
        """,
    )
    (profile,) = load(path)
    assert profile.enabled_at("score") == ("NodeAffinity",)
    assert profile.enabled_at("filter") == DEFAULT.multi_point
    assert profile.weight("NodeAffinity") == 4


def test_plugin_config_args(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: NodeResourcesFitArgs
              scoringStrategy:
                type: MostAllocated
        """,
    )
    (profile,) = load(path)
    args = profile.args["NodeResourcesFit"]
    assert args == {"scoringStrategy": {"type": "MostAllocated"}}
    assert IN_TREE["NodeResourcesFit"](args, _NoHandle()).name == "NodeResourcesFit"


class _NoHandle:
    @property
    def snapshot(self) -> object:
        raise AssertionError("factories do not read the snapshot")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            "clientConnection: {}\n",
            "(top level): unsupported field(s) clientConnection; supported: apiVersion, kind,"
            " profiles, percentageOfNodesToScore",
            id="unsupported top-level field",
        ),
        pytest.param(
            "profiles:\n- schedulerName: x\n  plugins:\n    postBind: {}\n",
            "profiles[0].plugins: unsupported field(s) postBind",
            id="unsupported extension point",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodePorts, foo: 1}]\n",
            "profiles[0].plugins.filter.enabled[0]: unsupported field(s) foo",
            id="unsupported plugin field",
        ),
        pytest.param(
            "percentageOfNodesToScore: 120\n",
            "percentageOfNodesToScore: expected an integer from 0 to 100",
            id="percentage out of range",
        ),
        pytest.param(
            "profiles:\n- {}\n- {}\n",
            "profiles[1].schedulerName: duplicate scheduler name 'default-scheduler'",
            id="duplicate profile",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - {name: NodeAffinity, args: {kind: NodePortsArgs}}\n",
            "profiles[0].pluginConfig[0].args.kind: expected NodeAffinityArgs",
            id="args of another kind",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Bogus}]\n",
            "profiles[0].plugins.multiPoint.enabled[0].name: no plugin 'Bogus'",
            id="unknown plugin",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodePorts}]\n",
            "profiles[0].plugins: the per-point enabled lists order plugins differently",
            id="a reordering one plugin order cannot express",
        ),
    ],
)
def test_errors_name_the_file_and_field(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(SchedulerConfigError) as info:
        load(path, IN_TREE)
    assert str(info.value).startswith(f"{path}: {message}")


def test_wrong_api_version(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
    )
    with pytest.raises(SchedulerConfigError, match="apiVersion: supported: kubescheduler"):
        load(path)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(SchedulerConfigError, match="cannot read"):
        load(tmp_path / "missing.yaml")
