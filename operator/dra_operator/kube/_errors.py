"""Translation of HTTP failures into the package's APIError tree.

The client calls `error_from_response` for every non-2xx answer and `error_from_transport`
for anything aiohttp or the socket layer raises, always with `raise ... from`, so no aiohttp
exception crosses the kube/ boundary. A transport failure has no HTTP status: it is an
`APIServerError` with status 0 (retry later), reason `Timeout` or `Unreachable`.
"""

from __future__ import annotations

import json
from typing import Any

from dra_operator.errors import (
    APIConflictError,
    APIError,
    APIForbiddenError,
    APINotFoundError,
    APIServerError,
    APITooManyRequestsError,
)

__all__ = ["error_from_response", "error_from_status", "error_from_transport"]

_BY_STATUS: dict[int, type[APIError]] = {
    403: APIForbiddenError,
    404: APINotFoundError,
    409: APIConflictError,
    429: APITooManyRequestsError,
}


def error_from_status(status: int, reason: str, message: str) -> APIError:
    """The APIError subclass for an HTTP status code."""
    cls = _BY_STATUS.get(status) or (APIServerError if status >= 500 else APIError)
    return cls(status, reason, message)


def error_from_response(status: int, phrase: str, body: bytes) -> APIError:
    """Decode a failed response; the server's metav1.Status supplies reason and message."""
    reason, message = phrase, body.decode(errors="replace").strip()
    try:
        doc: Any = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        reason = str(doc.get("reason") or phrase)
        message = str(doc.get("message") or message)
    return error_from_status(status, reason, message)


def error_from_transport(exc: BaseException, what: str) -> APIServerError:
    """A request that got no HTTP answer: timed out, refused, TLS failure, broken stream."""
    if isinstance(exc, TimeoutError):
        return APIServerError(0, "Timeout", f"{what}: no answer in time")
    return APIServerError(0, "Unreachable", f"{what}: {type(exc).__name__}: {exc}")
