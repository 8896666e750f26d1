"""`skip_or_fail`: a missing build skips a test on a workstation and fails it under CI=true."""

from __future__ import annotations

import pytest
from tests.support.skipping import skip_or_fail


@pytest.mark.parametrize("ci", ["", "false"])
def test_it_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="run `make oracle`"):
        skip_or_fail("run `make oracle`")


@pytest.mark.parametrize("ci", ["true", "TRUE"])
def test_it_fails_under_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="failing instead of skipping"):
        skip_or_fail("run `make oracle`")
