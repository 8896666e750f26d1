"""The cluster and controllers facades list exactly their public names.

Their order is ruff's (RUF022, isort-style: constants, classes, functions), checked by `make lint`.
"""

from __future__ import annotations

import importlib
import types

import pytest


@pytest.mark.parametrize(
    "package",
    [
        "dra_operator.cluster",
        "dra_operator.controllers",
        "dra_operator.controllers.claims",
        "dra_operator.controllers.policies",
    ],
)
def test_all_matches_the_public_names(package: str) -> None:
    module = importlib.import_module(package)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(module.__all__) == public
