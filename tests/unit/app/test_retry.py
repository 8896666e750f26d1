"""`until_answered`: start-up calls retried through 429 and 5xx, other errors raised at once."""

from __future__ import annotations

import pytest

from dra_operator import errors
from dra_operator.app import _retry


async def test_throttled_and_failing_calls_are_retried_until_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_retry, "FIRST_DELAY", 0.001)
    failures = [
        errors.APITooManyRequestsError(429, "TooManyRequests", "slow down"),
        errors.APIServerError(0, "Unreachable", "connection refused"),
    ]

    async def call() -> str:
        if failures:
            raise failures.pop(0)
        return "answer"

    assert await _retry.until_answered(call, "test") == "answer"
    assert failures == []


async def test_other_errors_are_raised() -> None:
    async def call() -> str:
        raise errors.APIForbiddenError(403, "Forbidden", "no RBAC")

    with pytest.raises(errors.APIForbiddenError):
        await _retry.until_answered(call, "test")
