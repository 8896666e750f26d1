"""Building the `device` variable from a model.Device, including upstream's failure modes."""

from __future__ import annotations

import pytest

from dra_operator import cel
from dra_operator.errors import CELRuntimeError
from dra_operator.model import AttributeKind, Device, DeviceAttribute, FrozenMap

K = AttributeKind
LISTS = cel.CELFeatures(list_type_attributes=True)


def _device(**attributes: DeviceAttribute) -> Device:
    return Device(name="d", attributes=FrozenMap(attributes))


@pytest.mark.parametrize(
    ("attribute", "features", "expected"),
    [
        pytest.param(
            DeviceAttribute(kind=K.VERSION, value="1.x.0"),
            cel.DEFAULT_FEATURES,
            'attribute v: parse semantic version: Invalid character(s) found in minor number "x"',
            id="bad-version",
        ),
        pytest.param(
            DeviceAttribute(kind=None),
            cel.DEFAULT_FEATURES,
            "attribute v: unsupported attribute value",
            id="no-value",
        ),
        pytest.param(
            DeviceAttribute(kind=K.INTS, value=(1, 2)),
            cel.DEFAULT_FEATURES,
            "attribute v: unsupported attribute value",
            id="list-without-feature",
        ),
    ],
)
def test_every_evaluation_fails_on_a_bad_attribute(
    attribute: DeviceAttribute, features: cel.CELFeatures, expected: str
) -> None:
    view = cel.device_view("dra.example.com", _device(**{"dra.example.com/v": attribute}))
    selector = cel.compile_selector("true", features=features)
    with pytest.raises(CELRuntimeError) as info:
        selector.matches(view)
    assert str(info.value) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param('device.attributes["dra.example.com"].v.exists(x, x == 2)', True, id="exists"),
        pytest.param('device.attributes["dra.example.com"].v.includes(2)', True, id="includes"),
        pytest.param('device.attributes["dra.example.com"].v.includes(3)', False, id="excludes"),
        pytest.param(
            'device.attributes["dra.example.com"].s.all(v, v.isGreaterThan(semver("0.1.0")))',
            True,
            id="versions",
        ),
    ],
)
def test_list_attributes_with_the_feature(expression: str, expected: bool) -> None:
    device = _device(
        **{
            "dra.example.com/v": DeviceAttribute(kind=K.INTS, value=(1, 2)),
            "dra.example.com/s": DeviceAttribute(kind=K.VERSIONS, value=("1.0.0", "0.2.0")),
        }
    )
    view = cel.device_view("dra.example.com", device)
    assert cel.compile_selector(expression, features=LISTS).matches(view) is expected


def test_includes_refuses_long_lists() -> None:
    device = _device(**{"dra.example.com/v": DeviceAttribute(kind=K.INTS, value=tuple(range(49)))})
    view = cel.device_view("dra.example.com", device)
    selector = cel.compile_selector(
        'device.attributes["dra.example.com"].v.includes(1)', features=LISTS
    )
    with pytest.raises(CELRuntimeError, match="cannot be applied to lists longer than 48 values"):
        selector.matches(view)


def test_unqualified_names_belong_to_the_driver() -> None:
    device = _device(model=DeviceAttribute(kind=K.STRING, value="x"))
    view = cel.device_view("dra.example.com", device)
    assert cel.compile_selector('device.attributes["dra.example.com"].model == "x"').matches(view)
