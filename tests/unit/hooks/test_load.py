"""Loading hooks: `module:attr`, entry points, declared failure mode and timeout, bad hooks."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from importlib.metadata import EntryPoint

import pytest

from dra_operator.errors import HookLoadError
from dra_operator.hooks import DEFAULT_TIMEOUT, ENTRY_POINT_GROUP, FailureMode, _load, load_hooks


class _Good:
    failure_mode = "refuse"
    timeout = 0.25

    def score_device(self, info: object) -> float:
        return 1.0


class _Plain:
    def filter_device(self, info: object) -> bool:
        return True


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    mod = types.ModuleType("hooktest_mod")
    mod.Good = _Good  # type: ignore[attr-defined]
    mod.plain = _Plain()  # type: ignore[attr-defined]
    mod.nothing = object()  # type: ignore[attr-defined]
    mod.BadMode = type("BadMode", (_Plain,), {"failure_mode": "sometimes"})  # type: ignore[attr-defined]
    mod.BadTimeout = type("BadTimeout", (_Plain,), {"timeout": -1})  # type: ignore[attr-defined]
    mod.Scorer = type("Scorer", (), {"weight": 3, "score": lambda self, pod, node: 1})  # type: ignore[attr-defined]
    mod.BadWeight = type("BadWeight", (mod.Scorer,), {"weight": 0.5})  # type: ignore[attr-defined]
    sys.modules[mod.__name__] = mod
    yield mod
    del sys.modules[mod.__name__]


@pytest.mark.usefixtures("module")
def test_module_attr_hooks_load_with_their_declarations() -> None:
    good, plain = load_hooks(["hooktest_mod:Good", "hooktest_mod:plain"], use_entry_points=False)
    assert (good.name, good.failure_mode, good.timeout) == ("hooktest_mod:Good", "refuse", 0.25)
    assert isinstance(good.target, _Good)  # a class is instantiated
    assert (plain.failure_mode, plain.timeout) == (FailureMode.IGNORE, DEFAULT_TIMEOUT)
    assert good.has("score_device") and not good.has("filter_device")


@pytest.mark.usefixtures("module")
def test_a_hook_with_only_scheduler_points_loads_with_its_weight() -> None:
    (scorer,) = load_hooks(["hooktest_mod:Scorer"], use_entry_points=False)
    assert scorer.weight == 3 and scorer.has("score") and not scorer.has("score_device")


@pytest.mark.usefixtures("module")
@pytest.mark.parametrize(
    ("specs", "message"),
    [
        pytest.param(["hooktest_mod"], "hook hooktest_mod: expected module:attr", id="no-colon"),
        pytest.param(["no_such_mod_x:y"], "hook no_such_mod_x:y: cannot import", id="no-module"),
        pytest.param(["hooktest_mod:missing"], "cannot import", id="no-attr"),
        pytest.param(["hooktest_mod:nothing"], "has none of the methods", id="no-methods"),
        pytest.param(["hooktest_mod:BadMode"], "expected ignore or refuse", id="bad-mode"),
        pytest.param(["hooktest_mod:BadTimeout"], "expected positive seconds", id="bad-timeout"),
        pytest.param(["hooktest_mod:BadWeight"], "expected a positive integer", id="bad-weight"),
        pytest.param(
            ["hooktest_mod:plain"] * 2, "hook hooktest_mod:plain: loaded twice", id="twice"
        ),
    ],
)
def test_bad_hooks_stop_the_load(specs: list[str], message: str) -> None:
    with pytest.raises(HookLoadError, match=message):
        load_hooks(specs, use_entry_points=False)


@pytest.mark.usefixtures("module")
def test_entry_points_load_first_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    found = [
        EntryPoint("zeta", "hooktest_mod:plain", ENTRY_POINT_GROUP),
        EntryPoint("alpha", "hooktest_mod:Good", ENTRY_POINT_GROUP),
    ]

    def fake(*, group: str) -> list[EntryPoint]:
        assert group == ENTRY_POINT_GROUP
        return found

    monkeypatch.setattr(_load, "entry_points", fake)
    loaded = load_hooks(["hooktest_mod:plain"])
    assert [hook.name for hook in loaded] == ["alpha", "zeta", "hooktest_mod:plain"]


@pytest.mark.usefixtures("module")
def test_a_broken_entry_point_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = [EntryPoint("broken", "hooktest_mod:missing", ENTRY_POINT_GROUP)]
    monkeypatch.setattr(_load, "entry_points", lambda *, group: broken)
    with pytest.raises(HookLoadError, match="hook broken: cannot load entry point"):
        load_hooks()
