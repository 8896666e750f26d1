"""Go's rendering of doubles, durations and timestamps, as `string()` shows them."""

from __future__ import annotations

import datetime
import math

import pytest

from dra_operator.cel._format import format_double, format_duration, format_timestamp


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(1.5, "1.5", id="fraction"),
        pytest.param(100.0, "100", id="integral"),
        pytest.param(123456.0, "123456", id="below-exponent"),
        pytest.param(1e6, "1e+06", id="exponent"),
        pytest.param(1.25e-5, "1.25e-05", id="small"),
        pytest.param(0.0001, "0.0001", id="small-plain"),
        pytest.param(-0.0, "-0", id="negative-zero"),
        pytest.param(math.inf, "+Inf", id="inf"),
        pytest.param(math.nan, "NaN", id="nan"),
    ],
)
def test_format_double_matches_go(value: float, expected: str) -> None:
    assert format_double(value) == expected


def test_format_duration_and_timestamp() -> None:
    assert format_duration(datetime.timedelta(seconds=90, microseconds=500000)) == "90.5s"
    assert format_duration(-datetime.timedelta(seconds=2)) == "-2s"
    stamp = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert format_timestamp(stamp) == "2024-01-02T03:04:05Z"
