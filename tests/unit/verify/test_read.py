"""Which resource.k8s.io version verify reads: the newest one the model understands."""

from __future__ import annotations

import pytest

from dra_operator.verify import newest_version


@pytest.mark.parametrize(
    ("served", "expected"),
    [
        pytest.param(["v1", "v1beta2", "v1beta1", "v1alpha3"], "v1", id="release-1.36"),
        pytest.param(["v1beta1", "v1beta2", "v1alpha3"], "v1beta2", id="release-1.33"),
        pytest.param(["v1alpha3", "v1beta1"], "v1beta1", id="beta-over-alpha"),
        pytest.param(["v2alpha1", "v1beta1"], "v1beta1", id="unknown-version-skipped"),
        pytest.param([], None, id="nothing-served"),
    ],
)
def test_newest_version(served: list[str], expected: str | None) -> None:
    assert newest_version(served) == expected
