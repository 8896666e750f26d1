"""Every scenario name of upstream's allocator tables is ported, under the release it belongs to.

Reads the names from `structured/internal/allocatortesting/{allocator,lexicographical}_testing.go`
of k8s.io/dynamic-resource-allocation v0.36.5 and v0.37.2 in the Go module cache (the oracle
builds download both). A name counts as ported for a release when a scenario row with that id
(or `<name>/1.37`, the 1.37 expectation of a changed scenario) runs under that release
(`Case.releases`), or when the name is used as a test id outside the scenario rows. Names not
ported would be listed with the reason in NOT_PORTED_137; it is empty now.
"""

from __future__ import annotations

import re
from pathlib import Path

import test_allocate
import test_capacity
import test_capacity_137
import test_capacity_scenarios
import test_compatibility_groups
import test_constraint_lists
import test_constraints
import test_counter_scenarios
import test_counters
import test_derived_attributes
import test_optional_node_operations
import test_pools
import test_prioritized_scenarios
import test_search
import test_taints
from _pytest.mark.structures import ParameterSet
from allocator_builders import Case
from tests.support.go_modules import module_cache
from tests.support.skipping import skip_or_fail

HERE = Path(__file__).resolve().parent
RELEASES = {36: "v0.36.5", 37: "v0.37.2"}
SCENARIO_MODULES = (
    test_allocate,
    test_capacity,
    test_capacity_137,
    test_capacity_scenarios,
    test_compatibility_groups,
    test_constraint_lists,
    test_constraints,
    test_counter_scenarios,
    test_counters,
    test_derived_attributes,
    test_optional_node_operations,
    test_pools,
    test_prioritized_scenarios,
    test_search,
    test_taints,
)
_NAME = re.compile(r'^\t\t"([^"]+)": \{', re.MULTILINE)

NOT_PORTED_137: dict[str, str] = {}  # every v0.37.2 name is ported


def upstream_names(version: str) -> set[str]:
    folder = (
        module_cache()
        / f"k8s.io/dynamic-resource-allocation@{version}"
        / "structured/internal/allocatortesting"
    )
    if not folder.is_dir():
        skip_or_fail(f"{folder} not downloaded (make oracle fetches it)")
    names: set[str] = set()
    for name in ("allocator_testing.go", "lexicographical_testing.go"):
        names |= set(_NAME.findall((folder / name).read_text()))
    return names


def scenario_rows() -> dict[str, tuple[int, ...]]:
    """id -> releases of every Case row in the scenario modules' module-level lists."""
    rows: dict[str, tuple[int, ...]] = {}
    for module in SCENARIO_MODULES:
        for value in vars(module).values():
            if not isinstance(value, list):
                continue
            for entry in value:
                if isinstance(entry, ParameterSet) and isinstance(entry.values[0], Case):
                    rows[str(entry.id)] = entry.values[0].releases
    return rows


def missing(release: int) -> set[str]:
    rows = scenario_rows()
    sources = "\n".join(p.read_text() for p in HERE.glob("test_*.py") if p != Path(__file__))
    found = set()
    for name in upstream_names(RELEASES[release]):
        for row in (f"{name}/1.37", name) if release == 37 else (name,):
            if row in rows:
                if release in rows[row]:
                    found.add(name)
                break
        else:
            if f'"{name}"' in sources:  # a test id outside the scenario rows
                found.add(name)
    return upstream_names(RELEASES[release]) - found


def test_every_136_name_runs_under_136() -> None:
    assert missing(36) == set()


def test_every_137_name_runs_under_137() -> None:
    assert missing(37) == set(NOT_PORTED_137)
