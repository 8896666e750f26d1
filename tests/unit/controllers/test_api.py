"""Counting failed API writes: which failures are conflicts and which are worth a retry."""

from __future__ import annotations

import pytest
from tests.unit.observability.scrape import scrape

from dra_operator import errors
from dra_operator.controllers import counting_failures, record_retry, retry_reason
from dra_operator.observability import Metrics, RetryReason


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        pytest.param(errors.APIConflictError(409, "Conflict", "x"), RetryReason.CONFLICT, id="409"),
        pytest.param(
            errors.APITooManyRequestsError(429, "TooManyRequests", "x"),
            RetryReason.TOO_MANY_REQUESTS,
            id="429",
        ),
        pytest.param(
            errors.APIServerError(503, "ServiceUnavailable", "x"),
            RetryReason.SERVER_ERROR,
            id="503",
        ),
        pytest.param(
            errors.APIServerError(0, "Unreachable", "x"), RetryReason.SERVER_ERROR, id="unreachable"
        ),
        pytest.param(errors.APIServerError(0, "Timeout", "x"), RetryReason.TIMEOUT, id="timeout"),
        pytest.param(errors.APINotFoundError(404, "NotFound", "x"), None, id="404"),
        pytest.param(errors.APIForbiddenError(403, "Forbidden", "x"), None, id="403"),
        pytest.param(errors.APIError(422, "Invalid", "x"), None, id="422"),
        pytest.param(ValueError("x"), None, id="not-an-api-error"),
    ],
)
def test_retry_reason(error: Exception, reason: RetryReason | None) -> None:
    assert retry_reason(error) is reason


def test_a_conflict_counts_as_conflict_and_retry() -> None:
    metrics = Metrics()
    record_retry(metrics, "ResourceClaim", errors.APIConflictError(409, "Conflict", "x"))
    record_retry(metrics, "Pod", errors.APINotFoundError(404, "NotFound", "x"))
    record_retry(None, "Pod", errors.APIConflictError(409, "Conflict", "x"))  # no recorder
    found = scrape(metrics)
    assert found[("dra_operator_api_conflicts_total", (("kind", "ResourceClaim"),))] == 1
    retried = (("kind", "ResourceClaim"), ("reason", "conflict"))
    assert found[("dra_operator_api_retries_total", retried)] == 1
    assert not any(
        name.startswith("dra_operator_api") and dict(labels).get("kind") == "Pod"
        for name, labels in found
    )


def test_counting_failures_counts_and_reraises() -> None:
    metrics = Metrics()
    with pytest.raises(errors.APIServerError), counting_failures(metrics, "Pod"):
        raise errors.APIServerError(0, "Timeout", "no answer in time")
    with counting_failures(metrics, "Pod"):
        pass
    found = scrape(metrics)
    assert found[("dra_operator_api_retries_total", (("kind", "Pod"), ("reason", "timeout")))] == 1
    assert ("dra_operator_api_conflicts_total", (("kind", "Pod"),)) not in found
