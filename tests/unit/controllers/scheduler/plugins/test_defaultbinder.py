"""DefaultBinder, upstream's TestDefaultBinder cases, through the binder the Handle offers."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, Code
from dra_operator.controllers.scheduler.plugins import defaultbinder
from dra_operator.errors import APIServerError

from .builders import FakeHandle, make_pod, state


class RecordingBinder:
    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.bindings: list[tuple[str, str, str, str]] = []

    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        if self.fail:
            raise APIServerError(500, "InternalError", "binding rejected")
        self.bindings.append((namespace, name, uid, node_name))


class BindingHandle(FakeHandle):
    def __init__(self, binder: RecordingBinder) -> None:
        super().__init__()
        self._binder = binder

    @property
    def pod_binder(self) -> RecordingBinder:
        return self._binder


@pytest.mark.parametrize(
    ("fail", "want_code"),
    [
        pytest.param(False, Code.SUCCESS, id="successful"),
        pytest.param(True, Code.ERROR, id="binding error"),
    ],
)
async def test_default_binder(fail: bool, want_code: Code) -> None:
    binder = RecordingBinder(fail)
    plugin = defaultbinder.new({}, BindingHandle(binder))
    pod = make_pod("foo", namespace="ns")
    status = await plugin.bind(state(), pod, "foohost.kubernetes.mydomain.com")
    assert status.code is want_code
    if fail:
        assert status.plugin == "DefaultBinder" and "binding rejected" in status.reasons[0]
        assert binder.bindings == []
    else:
        assert status == SUCCESS
        assert binder.bindings == [("ns", "foo", "uid-foo", "foohost.kubernetes.mydomain.com")]


async def test_a_handle_without_a_binder_gives_an_error() -> None:
    status = await defaultbinder.new({}, FakeHandle()).bind(state(), make_pod(), "node")
    assert status.code is Code.ERROR
