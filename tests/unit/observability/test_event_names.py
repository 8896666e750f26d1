"""Every log call in operator/ names its event from an enum (`LogEvent`, the driver's
`DriverEvent`), never a string literal: the names a dashboard or an alert matches on are
declared in one place (docs/observability.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "operator" / "dra_operator"
LEVELS = frozenset({"debug", "info", "warning", "error", "exception", "critical"})
LOGGERS = frozenset({"_log", "log", "logger"})
REWORKED = PACKAGE / "controllers" / "scheduler"
"""Being rebuilt as a scheduling framework; its log calls move to `LogEvent` with it."""


def literal_events(source: str) -> list[int]:
    """Lines of log calls whose event is a string literal."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        target = node.func.value
        if node.func.attr not in LEVELS or not (
            isinstance(target, ast.Name) and target.id in LOGGERS
        ):
            continue
        if node.args and isinstance(node.args[0], ast.Constant | ast.JoinedStr):
            found.append(node.lineno)
    return found


def test_log_events_come_from_the_enums() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if REWORKED not in path.parents and (lines := literal_events(path.read_text()))
    }
    assert found == {}


def test_a_literal_event_is_found() -> None:
    assert literal_events('_log.info("pod.bound", pod="a")\nlog.warning(f"x{1}")\n') == [1, 2]
    assert literal_events("_log.info(LogEvent.POD_BOUND)\nnames.info('x')\n") == []
