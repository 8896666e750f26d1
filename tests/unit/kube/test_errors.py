"""HTTP failures become the package's APIError subclasses.

Covers: status → class (404/409/403/429/5xx, other 4xx as plain APIError); reason and message
taken from the server's metav1.Status, falling back to the HTTP phrase and body text; transport
failures as APIServerError with status 0.
"""

from __future__ import annotations

import json

import pytest

from dra_operator import errors
from dra_operator.kube._errors import error_from_response, error_from_transport


def _status(code: int, reason: str, message: str) -> bytes:
    doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    return json.dumps({**doc, "reason": reason, "message": message}).encode()


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        pytest.param(403, errors.APIForbiddenError, id="forbidden"),
        pytest.param(404, errors.APINotFoundError, id="not-found"),
        pytest.param(409, errors.APIConflictError, id="conflict"),
        pytest.param(429, errors.APITooManyRequestsError, id="too-many-requests"),
        pytest.param(500, errors.APIServerError, id="internal-error"),
        pytest.param(503, errors.APIServerError, id="unavailable"),
        pytest.param(422, errors.APIError, id="invalid"),
        pytest.param(410, errors.APIError, id="gone"),
    ],
)
def test_status_selects_the_class(status: int, cls: type[errors.APIError]) -> None:
    err = error_from_response(status, "Phrase", _status(status, "Reason", "what happened"))
    assert type(err) is cls
    assert (err.status, err.reason, err.message) == (status, "Reason", "what happened")


def test_non_status_body_falls_back_to_phrase_and_text() -> None:
    err = error_from_response(502, "Bad Gateway", b"upstream down\n")
    assert isinstance(err, errors.APIServerError)
    assert str(err) == "502 Bad Gateway: upstream down"


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        pytest.param(TimeoutError(), "Timeout", id="timeout"),
        pytest.param(ConnectionRefusedError("refused"), "Unreachable", id="refused"),
    ],
)
def test_transport_failures_are_server_errors(exc: BaseException, reason: str) -> None:
    err = error_from_transport(exc, "GET /api")
    assert isinstance(err, errors.APIServerError)
    assert (err.status, err.reason) == (0, reason)
    assert err.message.startswith("GET /api: ")
