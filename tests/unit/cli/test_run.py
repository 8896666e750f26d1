"""`dra-operator run`'s command line (the running operator is tested on the control plane).

Covers: the subcommand is registered and documents its flags; unknown controllers and a renew
deadline not shorter than the Lease duration are usage errors, reported before any I/O; a
`--hook` that cannot be loaded stops the command before it connects; a `--config` file with a
field, a plugin or plugin args the scheduler does not support is a usage error naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dra_operator.cli import main


def test_run_lists_its_flags() -> None:
    result = CliRunner().invoke(main, ["run", "--help"])
    assert result.exit_code == 0
    for flag in (
        "--controllers",
        "--scheduler-name",
        "--namespace",
        "--workers",
        "--leader-elect / --no-leader-elect",
        "--leader-election-namespace",
        "--lease-name",
        "--metrics-bind-address",
        "--health-bind-address",
        "--log-level",
        "--kubeconfig",
        "--hook MODULE:ATTR",
        "--config FILE",
    ):
        assert flag in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--controllers", "claims,gc"], "unknown controller gc", id="unknown"),
        pytest.param(
            ["--leader-elect-lease-duration", "5", "--leader-elect-renew-deadline", "5"],
            "must be shorter than the lease duration",
            id="renew-deadline",
        ),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["run", *args])
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        pytest.param("no_such_module:Hook", "hook no_such_module:Hook: cannot import", id="import"),
        pytest.param("json:dumps", "hook json:dumps: has none of the methods", id="no-method"),
    ],
)
def test_a_hook_that_cannot_be_loaded_stops_the_command(hook: str, message: str) -> None:
    result = CliRunner().invoke(main, ["run", "--kubeconfig", "/dev/null", "--hook", hook])
    assert result.exit_code == 1
    assert message in result.output


_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            "clientConnection: {qps: 50}\n",
            "(top level): unsupported field(s) clientConnection",
            id="field",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n",
            "profiles[0].plugins.score.enabled[0].name: no plugin 'NoSuchPlugin'",
            id="plugin",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
            "    args: {bindTimeoutSeconds: -1}\n",
            "args.bindTimeoutSeconds: must not be negative",
            id="args",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: DynamicResources}]\n",
            "DynamicResources cannot be disabled",
            id="dynamic-resources",
        ),
    ],
)
def test_an_unsupported_scheduler_config_is_a_usage_error(
    tmp_path: Path, body: str, message: str
) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(_HEAD + body)
    result = CliRunner().invoke(main, ["run", "--kubeconfig", "/dev/null", "--config", str(config)])
    assert result.exit_code == 2
    assert message in result.output
