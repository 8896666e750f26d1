"""Logging configuration and reconcile context.

Covers: the JSON shape of one decision event; standard-library records (kopf, aiohttp) rendered
the same way with the bound context; level filtering; tracebacks; `auto` picking console for a
terminal and JSON otherwise; reconfiguring without stacking handlers; the scope ending with the
`with` block; bad level or format refused.
"""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from dra_operator.observability import LogEvent, configure_logging, get_logger, reconcile_scope


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


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


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_decision_is_one_json_object_with_its_keys() -> None:
    out = io.StringIO()
    configure_logging("info", "json", stream=out)
    with reconcile_scope("scheduler", pod="ns/p", claim="ns/c") as log:
        log.info(LogEvent.CLAIM_ALLOCATED, node="node-1", request="gpu")
    [record] = lines(out)
    assert record == {
        "event": "claim.allocated",
        "level": "info",
        "logger": "dra_operator.controllers.scheduler",
        "timestamp": record["timestamp"],
        "controller": "scheduler",
        "reconcile_id": record["reconcile_id"],
        "pod": "ns/p",
        "claim": "ns/c",
        "node": "node-1",
        "request": "gpu",
    }
    assert record["timestamp"].endswith("Z")
    uuid.UUID(record["reconcile_id"])


def test_standard_library_records_carry_the_context() -> None:
    out = io.StringIO()
    configure_logging("info", "json", stream=out)
    with reconcile_scope("claims", claim="ns/c"):
        logging.getLogger("kopf.objects").warning("handler %s failed", "on_claim")
    [record] = lines(out)
    assert record["event"] == "handler on_claim failed"
    assert record["level"] == "warning"
    assert record["logger"] == "kopf.objects"
    assert record["controller"] == "claims"
    assert record["claim"] == "ns/c"


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        pytest.param("debug", ["d", "i", "w", "std-d", "std-i"], id="debug"),
        pytest.param("INFO", ["i", "w", "std-i"], id="info-any-case"),
        pytest.param("warning", ["w"], id="warning"),
        pytest.param(logging.ERROR, [], id="numeric-error"),
    ],
)
def test_level_filters_both_kinds_of_record(level: str | int, expected: list[str]) -> None:
    out = io.StringIO()
    configure_logging(level, "json", stream=out)
    log = get_logger("dra_operator.test")
    log.debug("d")
    log.info("i")
    log.warning("w")
    logging.getLogger("aiohttp.client").debug("std-d")
    logging.getLogger("aiohttp.client").info("std-i")
    assert sorted(r["event"] for r in lines(out)) == sorted(expected)


def test_an_exception_is_logged_with_its_traceback() -> None:
    out = io.StringIO()
    configure_logging("info", "json", stream=out)
    try:
        raise ValueError("boom")
    except ValueError:
        get_logger("dra_operator.test").exception(LogEvent.RECONCILE_FAILED)
    [record] = lines(out)
    assert record["event"] == "reconcile.failed"
    assert record["level"] == "error"
    assert "Traceback" in record["exception"]
    assert "ValueError: boom" in record["exception"]


@pytest.mark.parametrize(
    ("stream", "fmt", "is_json"),
    [
        pytest.param(io.StringIO(), "auto", True, id="auto-pipe-is-json"),
        pytest.param(TTY(), "auto", False, id="auto-terminal-is-console"),
        pytest.param(TTY(), "json", True, id="json-forced-on-terminal"),
        pytest.param(io.StringIO(), "console", False, id="console-forced-on-pipe"),
    ],
)
def test_format(stream: io.StringIO, fmt: Any, is_json: bool) -> None:
    configure_logging("info", fmt, stream=stream)
    get_logger("dra_operator.test").info(LogEvent.POD_BOUND, pod="ns/p")
    [line] = stream.getvalue().splitlines()
    assert "pod.bound" in line
    assert "ns/p" in line
    if is_json:
        assert json.loads(line)["pod"] == "ns/p"
    else:
        with pytest.raises(json.JSONDecodeError):
            json.loads(line)


def test_configuring_again_replaces_the_handler() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging("info", "json", stream=first)
    configure_logging("info", "json", stream=second)
    get_logger("dra_operator.test").info(LogEvent.CACHE_SYNCED, kind="Pod")
    assert first.getvalue() == ""
    assert [r["kind"] for r in lines(second)] == ["Pod"]


def test_the_scope_ends_with_the_block_and_ids_differ() -> None:
    out = io.StringIO()
    configure_logging("info", "json", stream=out)
    log = get_logger("dra_operator.test")
    for _ in range(2):
        with reconcile_scope("eviction", pod="ns/p"):
            log.info(LogEvent.EVICTION_SCHEDULED)
    log.info(LogEvent.LEADER_ACQUIRED)
    first, second, outside = lines(out)
    assert first["reconcile_id"] != second["reconcile_id"]
    assert "controller" not in outside
    assert "pod" not in outside


@pytest.mark.parametrize(
    ("level", "fmt", "message"),
    [
        pytest.param("loud", "json", "log level must be one of", id="bad-level"),
        pytest.param("info", "xml", "log format must be one of", id="bad-format"),
    ],
)
def test_bad_settings_are_refused(level: str, fmt: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        configure_logging(level, fmt, stream=io.StringIO())
