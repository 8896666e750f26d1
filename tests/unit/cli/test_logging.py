"""`--log-level/--log-format` on the `dra-operator` group and on commands (`cli._logging`).

Covers: the level reaching the root logger (so kopf and aiohttp follow it); the environment
variables; a command's own options winning over the group's, and the group's being kept when
the command gives none; a bad level refused as a usage error naming the option.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import click
import pytest
import structlog
from click.testing import CliRunner

from dra_operator.cli import main
from dra_operator.cli._logging import log_options


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    structlog.reset_defaults()


@click.group()
@log_options
def group() -> None:
    pass


@group.command()
@log_options
def run() -> None:
    click.echo(logging.getLevelName(logging.getLogger().level))


@pytest.mark.parametrize(
    ("args", "env", "level"),
    [
        pytest.param([], {}, logging.INFO, id="default-info"),
        pytest.param(["--log-level", "DEBUG"], {}, logging.DEBUG, id="flag"),
        pytest.param([], {"DRA_OPERATOR_LOG_LEVEL": "warning"}, logging.WARNING, id="env"),
    ],
)
def test_the_level_reaches_the_root_logger(args: list[str], env: dict[str, str], level: int):
    result = CliRunner(env=env).invoke(
        main, [*args, "--log-format", "json", "controlplane", "--help"]
    )
    assert result.exit_code == 0, result.output
    assert logging.getLogger().level == level


@pytest.mark.parametrize(
    ("args", "level"),
    [
        pytest.param(["run"], "INFO", id="defaults"),
        pytest.param(["--log-level", "debug", "run"], "DEBUG", id="group-only"),
        pytest.param(["run", "--log-level", "error"], "ERROR", id="command-only"),
        pytest.param(
            ["--log-level", "debug", "run", "--log-level", "warning"], "WARNING", id="command-wins"
        ),
        pytest.param(
            ["--log-level", "debug", "run", "--log-format", "json"], "DEBUG", id="group-level-kept"
        ),
    ],
)
def test_command_options_win_over_the_groups(args: list[str], level: str) -> None:
    result = CliRunner().invoke(group, args)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == level


def test_a_bad_level_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["--log-level", "loud", "controlplane", "--help"])
    assert result.exit_code == 2
    assert "--log-level" in result.output
    assert "log level must be one of" in result.output
