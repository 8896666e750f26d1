"""Every named case of kube-scheduler v1.37.2's plugin tests has a verdict, and the page says so.

The cases are read from the Go module cache (tests/support/scheduler_test_inventory.py). A case
of a plugin registered in our `IN_TREE` must be ported (a test id with its name under
tests/unit/controllers/scheduler/plugins) or carry a reason in its test module's
`UPSTREAM_NOT_PORTED`: so this test passes while plugins are missing and gets stricter as each
one lands.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from tests.support import scheduler_test_inventory as inventory

PAGE = Path(__file__).resolve().parents[4] / "docs" / "scheduler-tests.md"


@pytest.fixture(scope="module")
def cases() -> list[inventory.Case]:
    root = inventory.source_root()
    if not root.is_dir():
        message = f"{root} not downloaded (make oracle fetches it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return inventory.upstream_cases(root)


def test_every_plugin_folder_is_read(cases: list[inventory.Case]) -> None:
    """Counts of named cases per folder, from scheduler-profile's survey of v1.37.2 (names
    that are string literals: a handful built from variables are not table names)."""
    counts = Counter(case.folder for case in cases)
    assert set(counts) | {"topologyaware"} == set(inventory.FOLDER_PLUGINS) | {"helper"}
    assert counts["podtopologyspread"] == 183
    assert counts["noderesources"] == 161
    assert counts["tainttoleration"] == 33
    assert counts["nodeaffinity"] == 40
    assert counts["volumebinding"] == 63
    assert sum(counts.values()) == 1123


def test_names_joined_over_lines_are_read_whole(cases: list[inventory.Case]) -> None:
    names = {case.name for case in cases if case.folder == "nodeaffinity"}
    assert (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) "
        "both are satisfied, will schedule onto the node"
    ) in names


def test_every_case_of_an_implemented_plugin_is_ported_or_explained(
    cases: list[inventory.Case],
) -> None:
    verdicts = inventory.verdicts(
        cases,
        inventory.ported_ids(),
        inventory.registered_plugins(),
        inventory.declared_reasons(),
    )
    unexplained = sorted(
        f"{v.case.folder}: {v.case.name}" for v in verdicts if v.reason == inventory.UNEXPLAINED
    )
    assert unexplained == [], f"{len(unexplained)} upstream cases neither ported nor explained"


def test_no_reason_is_stale(cases: list[inventory.Case]) -> None:
    """A declared reason must explain some case that is not ported."""
    ids = inventory.ported_ids()
    unported = [case for case in cases if case.name not in ids]
    keys = {case.name for case in unported} | {f"{case.function}/*" for case in unported}
    stale = sorted(set(inventory.declared_reasons()) - keys)
    assert stale == []


def test_the_pending_list_only_shrinks(cases: list[inventory.Case]) -> None:
    """A pending case that is ported, explained, or no longer a case of an implemented plugin
    must leave `PENDING`."""
    explained = inventory.verdicts(
        cases,
        inventory.ported_ids(),
        inventory.registered_plugins(),
        inventory.declared_reasons(),
        pending=frozenset(),
    )
    still_unexplained = {
        (v.case.folder, v.case.name) for v in explained if v.reason == inventory.UNEXPLAINED
    }
    assert sorted(inventory.PENDING - still_unexplained) == []


def test_reasons_are_read_from_the_test_modules(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        'UPSTREAM_NOT_PORTED: dict[str, str] = {"a case": "why", "TestQueueing/*": "hints"}\n'
    )
    assert inventory.declared_reasons(tmp_path) == {"a case": "why", "TestQueueing/*": "hints"}
    case = inventory.Case("nodename", "node_name_test.go", "TestQueueing", "another case")
    (verdict,) = inventory.verdicts(
        [case], set(), {"NodeName"}, inventory.declared_reasons(tmp_path)
    )
    assert verdict.reason == "hints"


def test_a_registered_plugin_without_its_ports_is_reported() -> None:
    """The strictness the inventory promises, on a made-up case."""
    case = inventory.Case("nodename", "node_name_test.go", "TestNodeName", "made-up case")
    (before,) = inventory.verdicts([case], ids=set(), registered=set())
    (after,) = inventory.verdicts([case], ids=set(), registered={"NodeName"})
    (pending,) = inventory.verdicts(
        [case], ids=set(), registered={"NodeName"}, pending=frozenset({("nodename", case.name)})
    )
    (ported,) = inventory.verdicts([case], ids={"made-up case"}, registered={"NodeName"})
    (explained,) = inventory.verdicts(
        [case], ids=set(), registered={"NodeName"}, not_ported={"made-up case": "x"}
    )
    assert (before.ported, before.reason) == (False, inventory.NOT_IMPLEMENTED)
    assert (after.ported, after.reason) == (False, inventory.UNEXPLAINED)
    assert (pending.ported, pending.reason) == (False, inventory.PENDING_REASON)
    assert (ported.ported, ported.reason) == (True, "")
    assert (explained.ported, explained.reason) == (False, "x")


def test_docs_page_is_current(cases: list[inventory.Case]) -> None:
    verdicts = inventory.verdicts(
        cases,
        inventory.ported_ids(),
        inventory.registered_plugins(),
        inventory.declared_reasons(),
    )
    assert PAGE.read_text() == inventory.render(verdicts), (
        "docs/scheduler-tests.md is stale: "
        "python -m tests.support.scheduler_test_inventory > docs/scheduler-tests.md"
    )
