"""`dra-operator --log-level/--log-format`: the group configures logging before any command.

Covers: the level reaching the root logger (so kopf and aiohttp follow it), the environment
variables, and a bad level refused as a usage error naming the option.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog
from click.testing import CliRunner

from dra_operator.cli import main


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


def test_a_bad_level_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["--log-level", "loud", "controlplane", "--help"])
    assert result.exit_code == 2
    assert "--log-level" in result.output
    assert "log level must be one of" in result.output
