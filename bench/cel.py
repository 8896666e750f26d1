"""Benchmark: DRA device selectors in our compiled CEL against three other runtimes.

Prints median µs per warm evaluation and per compilation for the representative selectors of
bench/cel_selectors.json (shared with the Go oracle's `go test -bench`):

* ours — `dra_operator.cel`, warm (device view built once) and with the view built per call
  (what upstream's DeviceMatches does every time);
* celpy — cel-python's interpreter, with Semver/Quantity added as Python functions;
* cel-expr-python — Google's C++ CEL, core language only, so versions and quantities are passed
  as strings and compared by Python callbacks (a tagged-string encoding);
* go — upstream k8s.io/dynamic-resource-allocation/cel, ns/op from tests/oracle's BenchmarkCEL.

Run: `.venv/bin/python bench/cel.py` (add `--no-go` to skip the Go benchmark).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from dra_operator import cel, model

ROOT = Path(__file__).resolve().parents[1]
SELECTORS = ROOT / "bench" / "cel_selectors.json"


def median_us(fn: Callable[[], object], *, budget: float = 0.2, repeats: int = 7) -> float:
    """Median over `repeats` timed loops, each sized to take about `budget`/`repeats` seconds."""
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > budget / repeats / 4 or loops > 1 << 22:
            break
        loops *= 4
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - start) / loops * 1e6)
    return statistics.median(samples)


def _model_device(driver: str, device: dict[str, Any]) -> model.Device:
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "bench"},
        "spec": {
            "driver": driver,
            "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
            "allNodes": True,
            "devices": [device],
        },
    }
    parsed = model.parse_object(raw)
    assert isinstance(parsed, model.ResourceSlice)
    return parsed.devices[0]


# -- ours --------------------------------------------------------------------------------------


def bench_ours(
    driver: str, device: dict[str, Any], selectors: list[dict[str, Any]]
) -> dict[str, Any]:
    parsed = _model_device(driver, device)
    view = cel.device_view(driver, parsed)
    out: dict[str, Any] = {}
    for sel in selectors:
        compiled = cel.compile_selector(sel["expression"])
        assert compiled.matches(view) is sel["match"], sel
        matches = compiled.matches
        out[sel["name"]] = {
            "eval": median_us(lambda m=matches: m(view)),
            "eval_view": median_us(lambda m=matches: m(cel.device_view(driver, parsed))),
            "compile": median_us(lambda e=sel["expression"]: cel.compile_selector(e), budget=0.5),
        }
    return out


# -- cel-python (celpy) ------------------------------------------------------------------------


def bench_celpy(
    driver: str, device: dict[str, Any], selectors: list[dict[str, Any]]
) -> dict[str, Any]:
    import celpy
    from celpy import celtypes

    from dra_operator.cel import _lib_k8s  # the same Semver/Quantity parsing, as Python callbacks

    def attrs(prefix: str, values: dict[str, Any]) -> celtypes.MapType:
        inner: dict[Any, Any] = {}
        for name, value in values.items():
            ((kind, v),) = value.items()
            key = celtypes.StringType(name)
            if kind == "version":
                inner[key] = _lib_k8s.parse_semver(v)
            elif kind == "value":
                inner[key] = _lib_k8s.parse_quantity(v)
            else:
                inner[key] = celpy.json_to_cel(v)
        return celtypes.MapType({celtypes.StringType(prefix): celtypes.MapType(inner)})

    activation = {
        "device": celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(driver),
                celtypes.StringType("attributes"): attrs(driver, device["attributes"]),
                celtypes.StringType("capacity"): attrs(driver, device["capacity"]),
            }
        )
    }
    functions = {
        "semver": lambda s: _lib_k8s.parse_semver(str(s)),
        "quantity": lambda s: _lib_k8s.parse_quantity(str(s)),
        "isGreaterThan": lambda a, b: celtypes.BoolType(a.compare(b) > 0),
        "compareTo": lambda a, b: celtypes.IntType(a.compare(b)),
    }
    env = celpy.Environment()
    out: dict[str, Any] = {}
    for sel in selectors:
        if "cel.bind" in sel["expression"]:
            out[sel["name"]] = None  # cel-python has no cel.bind
            continue

        def compile_it(e: str = sel["expression"]) -> Any:
            return env.program(env.compile(e), functions=functions)

        program = compile_it()
        assert bool(program.evaluate(activation)) is sel["match"], sel
        out[sel["name"]] = {
            "eval": median_us(lambda p=program: p.evaluate(activation)),
            "compile": median_us(compile_it, budget=0.5),
        }
    return out


# -- cel-expr-python ---------------------------------------------------------------------------


def bench_cel_cpp(
    driver: str, device: dict[str, Any], selectors: list[dict[str, Any]]
) -> dict[str, Any]:
    from cel_expr_python import cel as cpp
    from cel_expr_python.ext import ext_bindings

    from dra_operator.cel import _lib_k8s

    def semver_cmp(a: str, b: str) -> int:
        return _lib_k8s.parse_semver(a).compare(_lib_k8s.parse_semver(b))

    def quantity_cmp(a: str, b: str) -> int:
        return _lib_k8s.parse_quantity(a).compare(_lib_k8s.parse_quantity(b))

    S, N, B = cpp.Type.STRING, cpp.Type.INT, cpp.Type.BOOL
    functions = [
        cpp.FunctionDecl("semver", [cpp.Overload("semver_s", S, [S], impl=lambda s: s)]),
        cpp.FunctionDecl("quantity", [cpp.Overload("quantity_s", S, [S], impl=lambda s: s)]),
        cpp.FunctionDecl(
            "isGreaterThan",
            [
                cpp.Overload(
                    "gt_ss", B, [S, S], is_member=True, impl=lambda a, b: semver_cmp(a, b) > 0
                )
            ],
        ),
        cpp.FunctionDecl(
            "compareTo", [cpp.Overload("cmp_ss", N, [S, S], is_member=True, impl=quantity_cmp)]
        ),
    ]
    env = cpp.NewEnv(
        variables={"device": cpp.Type.Map(S, cpp.Type.DYN)},
        extensions=[ext_bindings.ExtBindings()],
        functions=functions,
    )

    def plain(values: dict[str, Any]) -> dict[str, Any]:
        return {name: next(iter(v.values())) for name, v in values.items()}

    data = {
        "device": {
            "driver": driver,
            "attributes": {driver: plain(device["attributes"])},
            "capacity": {driver: plain(device["capacity"])},
        }
    }
    activation = env.Activation(data)
    out: dict[str, Any] = {}
    for sel in selectors:
        expression = env.compile(sel["expression"])
        assert expression.eval(activation).value() is sel["match"], sel
        out[sel["name"]] = {
            "eval": median_us(lambda e=expression: e.eval(activation)),
            "compile": median_us(
                lambda s=sel["expression"]: env.compile(s).eval(activation), budget=0.5
            ),
        }
    return out


# -- upstream Go -------------------------------------------------------------------------------

_GO_LINE = re.compile(r"^BenchmarkCEL/(evaluate|compile)/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def bench_go() -> dict[str, Any] | None:
    if shutil.which("go") is None:
        return None
    done = subprocess.run(
        ["go", "test", "-run", "^$", "-bench", "^BenchmarkCEL$", "-benchtime", "200ms", "."],
        cwd=ROOT / "tests" / "oracle",
        capture_output=True,
        text=True,
        check=False,
    )
    out: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        match = _GO_LINE.match(line)
        if match:
            kind, name, ns = match.groups()
            out.setdefault(name, {})["eval" if kind == "evaluate" else "compile"] = float(ns) / 1e3
    return out or None


def _cell(result: dict[str, Any] | None, name: str, key: str) -> str:
    row = (result or {}).get(name)
    if not row or key not in row:
        return "—"
    value = row[key]
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-go", action="store_true", help="skip the upstream Go benchmark")
    args = parser.parse_args()
    spec = json.loads(SELECTORS.read_text())
    driver, device, selectors = spec["driver"], spec["device"], spec["selectors"]
    ours = bench_ours(driver, device, selectors)
    celpy_results = bench_celpy(driver, device, selectors)
    cpp_results = bench_cel_cpp(driver, device, selectors)
    go_results = None if args.no_go else bench_go()
    console = Console()
    evaluation = Table(title="Median µs per warm evaluation (lower is better)")
    compilation = Table(title="Median µs per compilation")
    for table in (evaluation, compilation):
        table.add_column("selector")
    for column in ("ours", "ours + device view", "celpy", "cel-expr-python", "go (DeviceMatches)"):
        evaluation.add_column(column, justify="right")
    for column in ("ours", "celpy", "cel-expr-python (+1st eval)", "go"):
        compilation.add_column(column, justify="right")
    for sel in selectors:
        name = sel["name"]
        evaluation.add_row(
            name,
            _cell(ours, name, "eval"),
            _cell(ours, name, "eval_view"),
            _cell(celpy_results, name, "eval"),
            _cell(cpp_results, name, "eval"),
            _cell(go_results, name, "eval"),
        )
        compilation.add_row(
            name,
            _cell(ours, name, "compile"),
            _cell(celpy_results, name, "compile"),
            _cell(cpp_results, name, "compile"),
            _cell(go_results, name, "compile"),
        )
    console.print(evaluation)
    console.print(compilation)
    console.print(
        "celpy has no cel.bind (—); go's DeviceMatches rebuilds the attribute maps per call, "
        "compare it with 'ours + device view'."
    )


if __name__ == "__main__":
    main()
