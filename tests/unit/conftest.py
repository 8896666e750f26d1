"""Unit-test hooks.

looptime 0.9 asks pytest-asyncio's event-loop policy for "the" loop before *every* test that
has the `event_loop_policy` fixture, sync tests included; in a sync test none is set, so
`get_event_loop()` creates one that nobody closes, and with warnings as errors the session ends
in "unclosed event loop". Sync tests never use that fixture, so hide it from looptime for them.
Remove this hook once looptime skips sync tests itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, Any, Any]:
    # pytest-asyncio marks every async test (auto mode) and wraps its function, so the marker,
    # not the function, tells async from sync.
    is_sync = pyfuncitem.get_closest_marker("asyncio") is None
    wanted = inspect.signature(pyfuncitem.function).parameters
    if is_sync and "event_loop_policy" not in wanted:
        pyfuncitem.funcargs.pop("event_loop_policy", None)
    return (yield)
