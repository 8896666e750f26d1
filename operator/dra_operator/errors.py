"""The one error tree of dra-operator.

A leaf module: it imports nothing from the package, so every layer can raise these::

    DRAOperatorError
    ├── InvalidObjectError        malformed API object or manifest; carries the JSON path
    ├── CELError                  device selector problems
    │   ├── CELCompileError       syntax, undeclared reference, non-bool result, too long
    │   └── CELRuntimeError       evaluation failed (no such key, overflow, ...)
    │       └── CELAbortError     ends the whole evaluation (cel-go panicked); never absorbed
    │           └── CELCostLimitError  runtime cost budget exceeded
    ├── AllocationInputError      fatal allocator input (missing class, bad selector): aborts
    │                             the attempt. "Does not fit" is never an exception.
    ├── APIError                  the API server said no; translated at the kube/ boundary
    │   ├── APINotFoundError
    │   ├── APIConflictError
    │   ├── APIForbiddenError
    │   ├── APITooManyRequestsError
    │   └── APIServerError
    ├── TerminalError             retrying cannot help; log, count and drop the work item
    ├── HookLoadError             an extension hook could not be imported or is malformed
    └── ControlPlaneError         the local etcd + kube-apiserver could not start or stop

Messages are lowercase, without a final period, and name a path from the outer object inward.
"""

from __future__ import annotations


class DRAOperatorError(Exception):
    """Base of every error this package raises on purpose."""


class InvalidObjectError(DRAOperatorError):
    """An object does not have the shape its API version promises.

    `path` is the JSON path of the offending field (``spec.devices[0].requests[1].name``);
    `source` names where the object came from (a file, ``ns/name``), when known.
    """

    def __init__(self, path: str, message: str, *, source: str = "") -> None:
        self.path = path
        self.message = message
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{path}: {message}" if path else f"{where}{message}")

    def at(self, source: str) -> InvalidObjectError:
        """The same error, attributed to a file or object name."""
        return InvalidObjectError(self.path, self.message, source=source)


class CELError(DRAOperatorError):
    """A device selector could not be compiled or evaluated."""


class CELCompileError(CELError):
    """The expression is not valid in the DRA CEL environment."""


class CELRuntimeError(CELError):
    """Evaluating the expression against one device failed."""


class CELAbortError(CELRuntimeError):
    """Evaluation stopped as a whole, as when cel-go panics: no `&&`, `||` or macro absorbs it."""


class CELCostLimitError(CELAbortError):
    """Evaluation exceeded the runtime cost budget."""


class AllocationInputError(DRAOperatorError):
    """Allocator input that makes the whole attempt fail (upstream returns an error)."""


class APIError(DRAOperatorError):
    """The Kubernetes API refused a request; `status` is the HTTP status code."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")


class APINotFoundError(APIError):
    """404: the object is gone."""


class APIConflictError(APIError):
    """409: stale resourceVersion or the object already exists; re-read and re-decide."""


class APIForbiddenError(APIError):
    """403: RBAC does not grant the verb."""


class APITooManyRequestsError(APIError):
    """429: throttled; retry later."""


class APIServerError(APIError):
    """5xx: the server failed; retry later."""


class ClientClosedError(DRAOperatorError):
    """A request on an API client whose `async with` has ended (not an APIError: nothing
    retries it)."""


class TerminalError(DRAOperatorError):
    """Retrying this work item cannot succeed."""


class HookLoadError(DRAOperatorError):
    """An extension hook (`--hook module:attr` or an entry point) cannot be used."""


class ControlPlaneError(DRAOperatorError):
    """The local control plane (etcd, kube-apiserver, ...) failed; `log_tail` shows why."""

    def __init__(self, message: str, *, log_tail: str = "") -> None:
        self.message = message
        self.log_tail = log_tail
        super().__init__(message)
