"""The compiled-selector LRU and the per-device result cache."""

from __future__ import annotations

import pytest

from dra_operator import cel
from dra_operator.errors import CELCompileError, CELRuntimeError


def test_selector_cache_returns_the_same_compiled_selector() -> None:
    cache = cel.SelectorCache(maxsize=4)
    first = cache.get('device.driver == "x"')
    assert cache.get('device.driver == "x"') is first
    assert len(cache) == 1


def test_selector_cache_keys_on_features() -> None:
    cache = cel.SelectorCache()
    plain = cache.get("true")
    gated = cache.get("true", cel.CELFeatures(list_type_attributes=True))
    assert plain is not gated
    assert gated.features.list_type_attributes


def test_selector_cache_evicts_least_recently_used() -> None:
    cache = cel.SelectorCache(maxsize=2)
    a = cache.get("1 == 1")
    cache.get("2 == 2")
    cache.get("1 == 1")
    cache.get("3 == 3")
    assert len(cache) == 2
    assert cache.get("1 == 1") is a


def test_selector_cache_counts_compiles_and_their_errors() -> None:
    cache = cel.SelectorCache()
    cache.get("true")
    cache.get("true")
    for _ in range(2):
        with pytest.raises(CELCompileError):
            cache.get("device.drivr")
    assert (cache.compilations, cache.compilation_errors) == (3, 2)


def test_selector_cache_does_not_keep_compile_errors() -> None:
    cache = cel.SelectorCache()
    for _ in range(2):
        with pytest.raises(CELCompileError, match="undefined field 'drivr'"):
            cache.get('device.drivr == "x"')
    assert len(cache) == 0


def test_result_cache_remembers_matches_and_errors(gpu_view: cel.DeviceView) -> None:
    results = cel.ResultCache()
    ok = cel.compile_selector('device.driver == "gpu.example.com"')
    bad = cel.compile_selector('device.attributes["gpu.example.com"].nope')
    key = ("slice-uid", 3, "gpu-0")
    assert results.matches(ok, gpu_view, key) is True
    assert results.matches(ok, gpu_view, key) is True
    for _ in range(2):
        with pytest.raises(CELRuntimeError, match="no such key: nope"):
            results.matches(bad, gpu_view, key)
    assert len(results) == 2


def test_result_cache_bounds_devices(gpu_view: cel.DeviceView) -> None:
    results = cel.ResultCache(max_devices=2)
    selector = cel.compile_selector("true")
    for generation in range(5):
        results.matches(selector, gpu_view, ("uid", generation, "gpu-0"))
    assert len(results) == 2
