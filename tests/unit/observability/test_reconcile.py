"""The worker-boundary observer for `controllers.Controller`.

Covers: every outcome counted under `dra_operator_reconciles_total`; a retried error logged
once as `reconcile.failed` and a terminal one as `reconcile.dropped`, with traceback and key;
success logs nothing; the observer plugged into a real Controller.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog
from tests.unit.observability.scrape import value

from dra_operator import errors
from dra_operator.controllers import Controller, Outcome, Result
from dra_operator.observability import Metrics, configure_logging, reconcile_observer


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging("info", "json", stream=stream)
    yield stream
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    structlog.reset_defaults()


def boom(kind: type[Exception] = ValueError) -> Exception:
    try:
        raise kind("boom")
    except Exception as exc:  # with a traceback, as the worker hands it over
        return exc


@pytest.mark.parametrize(
    ("outcome", "error", "event"),
    [
        pytest.param(Outcome.SUCCESS, None, None, id="success"),
        pytest.param(Outcome.REQUEUE_AFTER, None, None, id="requeue-after"),
        pytest.param(Outcome.ERROR, boom(), "reconcile.failed", id="error-retried"),
        pytest.param(
            Outcome.TERMINAL, boom(errors.TerminalError), "reconcile.dropped", id="terminal"
        ),
    ],
)
def test_each_outcome_is_counted_and_errors_logged(
    log_stream: io.StringIO, outcome: Outcome, error: Exception | None, event: str | None
) -> None:
    metrics = Metrics()
    observe = reconcile_observer(metrics, "claims")
    observe("ns/pod", outcome, error)
    assert value(
        metrics, "dra_operator_reconciles_total", controller="claims", result=outcome.value
    )
    records = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    if event is None:
        assert records == []
    else:
        [record] = records
        assert record["event"] == event
        assert record["level"] == "error"
        assert record["key"] == "ns/pod"
        assert record["controller"] == "claims"
        assert "Traceback" in record["exception"]
        assert "boom" in record["exception"]


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_a_real_controller_reports_through_it(log_stream: io.StringIO) -> None:
    metrics = Metrics()

    async def reconcile(key: str) -> Result:
        if key == "bad":
            raise errors.TerminalError("claim ns/c: cannot be fixed by retrying")
        controller.shut_down()  # the last key: workers exit once it is settled
        return Result()

    controller: Controller[str] = Controller(
        "claims", reconcile, observe=reconcile_observer(metrics, "claims")
    )
    controller.enqueue("bad")
    controller.enqueue("good")
    await controller.run()
    assert value(metrics, "dra_operator_reconciles_total", controller="claims", result="success")
    dropped = value(
        metrics, "dra_operator_reconciles_total", controller="claims", result="terminal_error"
    )
    assert dropped == 1.0
    [record] = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    assert record["event"] == "reconcile.dropped"
    assert record["key"] == "bad"
