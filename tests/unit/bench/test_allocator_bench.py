"""bench/allocator.py's method: Go output parsing, alternating rounds, the table's summaries."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from bench.allocator import (
    COLUMNS,
    GoRound,
    OursRound,
    Row,
    cells,
    main,
    markdown,
    measure,
    parse_go,
)
from bench.allocator_scenarios import SCENARIOS, owned_scenarios, write_scenarios
from hypothesis import given
from hypothesis import strategies as st

TIMEOUT = "node node-0: timed out trying to allocate devices"
HEADER = "goos: linux\ngoarch: amd64\npkg: dra-operator.dev/tests/oracle\nBenchmarkAllocate\n"


@pytest.mark.parametrize(
    ("output", "name", "expected"),
    [
        pytest.param(
            HEADER + "BenchmarkAllocate/match-attribute-heavy/full\n"
            "BenchmarkAllocate/match-attribute-heavy/full-2   \t     302\t   3358243 ns/op"
            "\t         1.000 allocated\t   1119414 ns/claim\nPASS\n",
            "match-attribute-heavy",
            GoRound(us_per_claim=1119.414, allocated=True),
            id="allocated",
        ),
        pytest.param(
            "BenchmarkAllocate/consumable-capacity/full \t 10\t 4200000 ns/op\t 0 allocated"
            "\t 350000.5 ns/claim\n",
            "consumable-capacity",
            GoRound(us_per_claim=350.0005, allocated=False),
            id="gomaxprocs-1-no-suffix-not-allocated",
        ),
        pytest.param(
            HEADER + f"    bench_test.go:127: adversarial-backtracking: upstream error: {TIMEOUT}\n"
            "BenchmarkAllocate/adversarial-backtracking/full-2 \t 1\t10000197937 ns/op"
            "\t 0 allocated\t10000197937 ns/claim\n",
            "adversarial-backtracking",
            GoRound(us_per_claim=10000197.937, allocated=False, error=TIMEOUT),
            id="timeout",
        ),
        pytest.param(
            "    bench_test.go:127: other: upstream error: boom\n"
            "BenchmarkAllocate/other/full-2 \t 1\t 5 ns/op\t 1 allocated\t 5 ns/claim\n"
            "BenchmarkAllocate/mine/full-2 \t 1\t 8000 ns/op\t 1 allocated\t 4000 ns/claim\n",
            "mine",
            GoRound(us_per_claim=4.0, allocated=True),
            id="another-scenarios-lines-ignored",
        ),
        pytest.param(HEADER + "--- FAIL: BenchmarkAllocate\nFAIL\n", "mine", None, id="failed"),
    ],
)
def test_parse_go(output: str, name: str, expected: GoRound | None) -> None:
    assert parse_go(output, name) == expected


def _go(us: float, error: str | None = None) -> GoRound:
    return GoRound(us_per_claim=us, allocated=error is None, error=error)


def _ours(us: float, steps: int = 4) -> OursRound:
    return OursRound(us_per_claim=us, outcome="allocated", steps=steps)


@pytest.mark.parametrize(
    ("rounds", "timeout_at", "expected_calls"),
    [
        pytest.param(1, None, ["go", "ours"], id="one-round"),
        pytest.param(
            4,
            None,
            ["go", "ours", "ours", "go", "go", "ours", "ours", "go"],
            id="order-alternates",
        ),
        pytest.param(5, 1, ["go", "ours"], id="timeout-stops-after-the-first-round"),
        pytest.param(5, 2, ["go", "ours", "ours", "go"], id="timeout-in-a-later-round"),
    ],
)
def test_measure_alternates_and_stops_on_upstream_timeout(
    rounds: int, timeout_at: int | None, expected_calls: list[str]
) -> None:
    calls: list[str] = []

    def go() -> GoRound:
        calls.append("go")
        timed_out = calls.count("go") == timeout_at
        return _go(100.0, TIMEOUT if timed_out else None)

    def ours() -> OursRound:
        calls.append("ours")
        return _ours(50.0)

    said: list[str] = []
    row = measure("s", go, ours, rounds, said.append)
    assert calls == expected_calls
    assert row.ratios == [0.5] * (len(calls) // 2)
    assert row.stopped_early == (timeout_at is not None)
    assert len(said) == len(row.ratios)
    assert all(load >= 0 for load in row.load)


def test_cells_summarise_rounds() -> None:
    row = Row(
        "consumable-capacity",
        go=[_go(200.0), _go(300.0), _go(250.0)],
        ours=[_ours(200.0), _ours(150.0), _ours(500.0)],
        load=(1.25, 3.5),
    )
    assert dict(zip(COLUMNS, cells(row), strict=True)) == {
        "scenario": "consumable-capacity",
        "rounds": "3",
        "ours µs/claim": "200",
        "upstream µs/claim": "250",
        "ratio ours/upstream": "1.00",
        "ratio low–high": "0.50–2.00",
        "ours": "allocated (4 steps)",
        "upstream": "allocated",
        "load": "1.2 → 3.5",
    }


@pytest.mark.parametrize(
    ("ours_us", "ratio"),
    [
        pytest.param(7380.0, "0.00074", id="ms"),
        pytest.param(600.0, "0.000060", id="sub-ms-no-exponent"),
    ],
)
def test_cells_and_markdown_mark_a_timed_out_single_round(ours_us: float, ratio: str) -> None:
    row = Row("adversarial-backtracking", go=[_go(10_000_198.0, TIMEOUT)], ours=[_ours(ours_us)])
    got = dict(zip(COLUMNS, cells(row), strict=True))
    assert got["rounds"] == "1 (upstream timeout)"
    assert got["upstream µs/claim"] == "10,000,198"
    assert got["ratio ours/upstream"] == ratio
    assert got["ratio low–high"] == "—"
    assert got["upstream"] == TIMEOUT
    table = markdown([row], "settings")
    assert "one round only" in table
    assert "one round only" not in markdown([Row("x", [_go(1.0)], [_ours(1.0, 1)])], "settings")
    assert "| allocated (1 step) |" in markdown([Row("x", [_go(1.0)], [_ours(1.0, 1)])], "")


@given(
    st.lists(
        st.tuples(st.floats(1, 1e7), st.floats(1, 1e7)),
        min_size=1,
        max_size=9,
    )
)
def test_median_ratio_lies_within_the_reported_range(pairs: list[tuple[float, float]]) -> None:
    row = Row("s", go=[_go(g) for g, _ in pairs], ours=[_ours(o) for _, o in pairs])
    got = dict(zip(COLUMNS, cells(row), strict=True))
    median = float(got["ratio ours/upstream"])
    assert median == pytest.approx(statistics.median(row.ratios), rel=0.06, abs=0.006)
    if len(pairs) == 1:
        assert got["ratio low–high"] == "—"
    else:
        low, high = (float(x) for x in got["ratio low–high"].split("–"))
        assert low <= median <= high


def test_write_scenarios_puts_each_alone_and_keeps_the_committed_ones(tmp_path: Path) -> None:
    written = write_scenarios(tmp_path)
    committed = {p.stem for p in SCENARIOS.glob("*.json")}
    assert set(written) == committed | set(owned_scenarios())
    for name, path in written.items():
        assert list(path.parent.iterdir()) == [path]
        assert path.stem == name
        assert json.loads(path.read_text())["op"] == "allocate"
    for name in committed:
        assert written[name].read_text() == (SCENARIOS / f"{name}.json").read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--scenarios", "consumable-capacity,nope"], "unknown scenarios ['nope']", id="unknown"
        ),
        pytest.param(["--rounds", "0"], "--rounds must be at least 1", id="no-rounds"),
    ],
)
def test_bad_arguments_stop_before_any_measurement(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
