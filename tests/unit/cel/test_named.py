"""1.30's named-resources CEL environment (`attributes.<type>["name"]`).

Covers: each of the seven typed maps; a missing attribute is a runtime "no such key" error;
`device` and bare `attributes` are undeclared there; the result must be bool; the environment
is part of the cache key, so the same text compiles differently in the two environments.
"""

import json
from pathlib import Path

import pytest

from dra_operator import cel
from dra_operator.errors import CELCompileError, CELRuntimeError
from dra_operator.model import v1alpha2

SLICE = Path(__file__).parents[1] / "model" / "data" / "v1alpha2" / "resourceslice.json"
NAMED = cel.CELFeatures(named_resources=True)


@pytest.fixture(scope="module")
def views() -> tuple[cel.NamedView, cel.NamedView]:
    resource_slice = v1alpha2.parse_resource_slice(json.loads(SLICE.read_text()))
    assert resource_slice.instances is not None
    full, bare = resource_slice.instances
    return cel.named_view(full), cel.named_view(bare)


@pytest.mark.parametrize(
    "expression",
    [
        'attributes.quantity["memory"].compareTo(quantity("40Gi")) >= 0',
        'attributes.bool["mig"]',
        'attributes.int["index"] == 0',
        'attributes.intslice["cores"].size() == 3',
        'attributes.string["model"] == "A100"',
        '"gpu-1" in attributes.stringslice["links"]',
        'attributes.version["driver-version"].isLessThan(semver("1.2.3"))',
        'attributes.version["driver-version"].major() == 1',
    ],
)
def test_typed_maps(expression: str, views: tuple[cel.NamedView, cel.NamedView]) -> None:
    full, bare = views
    selector = cel.compile_selector(expression, features=NAMED)
    assert selector.matches(full) is True
    with pytest.raises(CELRuntimeError, match="no such key: "):
        selector.matches(bare)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('device.driver == "x"', "undeclared reference to 'device'"),
        ("attributes", "undeclared reference to 'attributes'"),
        ('attributes.float["x"] > 1', "undeclared reference to 'attributes'"),
        ('attributes.int["x"]', "must evaluate to bool"),
    ],
)
def test_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CELCompileError, match=message):
        cel.compile_selector(expression, features=NAMED)


def test_environments_do_not_share_cache_entries() -> None:
    cache = cel.SelectorCache()
    cache.get('attributes.bool["mig"]', NAMED)
    with pytest.raises(CELCompileError, match="undeclared reference to 'attributes'"):
        cache.get('attributes.bool["mig"]')
