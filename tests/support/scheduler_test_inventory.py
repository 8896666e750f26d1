"""Every named case of kube-scheduler v1.37.2's plugin tests, with its verdict here.

Reads the `name: "..."` fields of the table tests in
pkg/scheduler/framework/plugins/<folder>/*_test.go of k8s.io/kubernetes v1.37.2 from the Go
module cache (the scheduler oracle's build downloads it), and gives each one a verdict:

* ported: a test id (`pytest.param(..., id="<name>")` or `ids=[...]`) in
  tests/unit/controllers/scheduler/plugins carries that name;
* not ported, with the reason: a folder or file out of this scheduler's scope
  (`OUT_OF_SCOPE`), a plugin not implemented yet (none of the folder's plugins is registered in
  `plugins.IN_TREE`), or for an implemented plugin, the reason its test module declares in a
  module-level dict `UPSTREAM_NOT_PORTED = {"<case name>": "<reason>", "<TestFunction>/*":
  "<reason for every case of that upstream test function>"}`.

A name of an implemented plugin with neither a test id nor a reason is *unexplained*:
tests/unit/controllers/scheduler/test_upstream_plugin_tests.py fails on it, so the inventory
gets stricter as each plugin lands. docs/scheduler-tests.md is `render()`'s output:

    python -m tests.support.scheduler_test_inventory > docs/scheduler-tests.md
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.go_modules import module_cache

KUBERNETES = "v1.37.2"
PLUGINS_DIR = "pkg/scheduler/framework/plugins"
PORTED_TESTS = (
    Path(__file__).resolve().parents[1] / "unit" / "controllers" / "scheduler" / "plugins"
)
PLUGINS_PACKAGE = "dra_operator.controllers.scheduler.plugins"

# Upstream folder -> the plugin names (as registered) whose tests it holds.
FOLDER_PLUGINS: Mapping[str, tuple[str, ...]] = {
    "defaultbinder": ("DefaultBinder",),
    "defaultpreemption": ("DefaultPreemption",),
    "deferredpodscheduling": ("DeferredPodScheduling",),
    "dynamicresources": ("DynamicResources",),
    "gangscheduling": ("GangScheduling",),
    "imagelocality": ("ImageLocality",),
    "interpodaffinity": ("InterPodAffinity",),
    "nodeaffinity": ("NodeAffinity",),
    "nodedeclaredfeatures": ("NodeDeclaredFeatures",),
    "nodename": ("NodeName",),
    "nodeports": ("NodePorts",),
    "noderesources": ("NodeResourcesFit", "NodeResourcesBalancedAllocation"),
    "nodeunschedulable": ("NodeUnschedulable",),
    "nodevolumelimits": ("NodeVolumeLimits",),
    "podgrouppodscount": ("PodGroupPodsCount",),
    "podtopologyspread": ("PodTopologySpread",),
    "queuesort": ("PrioritySort",),
    "schedulinggates": ("SchedulingGates",),
    "tainttoleration": ("TaintToleration",),
    "topologyaware": ("TopologyAwareWorkloadScheduling",),
    "volumebinding": ("VolumeBinding",),
    "volumerestrictions": ("VolumeRestrictions",),
    "volumezone": ("VolumeZone",),
}
HELPER_MODULE = f"{PLUGINS_PACKAGE}._helper"  # upstream's plugins/helper: shared by plugins

# Folders, or single test files ("<folder>/<file>"), this scheduler does not take on.
OUT_OF_SCOPE: Mapping[str, str] = {
    "defaultpreemption": "preemption (PostFilter) is the next issue, not this one",
    "deferredpodscheduling": "gated by InPlacePodVerticalScalingSchedulerPreemption, off in "
    "v1.37.2's default profile",
    "gangscheduling": "pod groups (gate GenericWorkload) are not scheduled by this scheduler",
    "podgrouppodscount": "pod groups (gate GenericWorkload) are not scheduled by this scheduler",
    "topologyaware": "pod groups (gate TopologyAwareWorkloadScheduling) are not scheduled by "
    "this scheduler",
    "helper/podgroup_test.go": "pod groups (gate GenericWorkload) are not scheduled by this "
    "scheduler",
}
NOT_IMPLEMENTED = "plugin not implemented yet"

# Whole upstream test functions (by name pattern) that test machinery this scheduler lacks.
FUNCTION_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Benchmark"), "a Go benchmark: timings, not behaviour"),
    (
        re.compile(r"(?i)^Test_?IsSchedulableAfter|^TestEventsToRegister$"),
        "queueing hints (requeue on cluster events): the plugins here have none",
    ),
    (
        re.compile(r"Signature"),
        "pod signatures for opportunistic batching, which this scheduler does not do",
    ),
    (
        re.compile(r"^TestScorePlacement_"),
        "placement scoring of pod groups (gates GenericWorkload, "
        "TopologyAwareWorkloadScheduling) is not done by this scheduler",
    ),
    (
        re.compile(r"^TestComputePodResourceRequestWithNodeAllocatableDRA$"),
        "DRANodeAllocatableResources (alpha, off in v1.37.2) is not implemented",
    ),
    (
        re.compile(r"^TestDeferredResizeFit$"),
        "deferred in-place resizes: the model does not read a pod's resize status",
    ),
)

# Cases of implemented plugins that were neither ported nor explained when this inventory
# landed: a ratchet. Each is reported as pending; porting one (or giving its reason in the
# plugin's test module) makes the inventory test ask for its removal here, and nothing may be
# added.
PENDING_REASON = "not ported yet: to port, or to explain in the plugin's test module"
PENDING: frozenset[tuple[str, str]] = frozenset(
    {
        ("helper", "DefaultSelector for ReplicaSet OwnerReference pod case"),
        ("helper", "DefaultSelector for ReplicationController OwnerReference pod case"),
        ("helper", "DefaultSelector for StatefulSet OwnerReference pod case"),
        ("helper", "DefaultSelector for default case"),
        ("helper", "DefaultSelector for no OwnerReference pod case"),
        ("helper", "GetPodServices for pod-0"),
        ("helper", "GetPodServices for pod-1"),
        ("helper", "GetPodServices for pod-2"),
        ("helper", "GetPodServices for pod-3"),
        ("helper", "GetPodServices for pod-4"),
        ("helper", "should include the taints with NoExecute effect"),
        ("helper", "should include the taints with NoSchedule effect"),
        ("helper", "should not include the taints with PreferNoSchedule effect"),
        ("imagelocality", "pod with ImageVolume"),
        ("noderesources", "1x requestless container"),
        ("noderesources", "2x requestless container"),
        ("noderesources", "Resources not set, pods scheduled with error"),
        ("noderesources", "Resources not set, pods scheduled with error"),
        ("noderesources", "all nodes match"),
        ("noderesources", "container + requestless container + overhead"),
        ("noderesources", "exact node name match"),
        ("noderesources", "honor extended resource if the pod request"),
        ("noderesources", "include DRA resource on a node for balanced resource allocation"),
        (
            "noderesources",
            "include DRA resource on a node for balanced resource allocation if"
            " PreScore not called",
        ),
        ("noderesources", "init container + container + requestless container + overhead"),
        ("noderesources", "node name mismatch"),
        ("noderesources", "node selector match"),
        ("noderesources", "nothing scheduled, nothing requested, skip in PreScore"),
        ("noderesources", "overhead only"),
        ("noderesources", "request container + requestless container"),
        ("noderesources", "requestless init container + small init container + small container "),
        (
            "noderesources",
            "requestless init container + small init container + small container +"
            " requestless container ",
        ),
        ("noderesources", "resource with zero weight"),
        ("noderesources", "resource with zero weight"),
        (
            "noderesources",
            "resources requested, pods scheduled with resources if PreScore not called",
        ),
        ("noderesources", "test case for ScoringStrategy LeastAllocated with Extended resources"),
        (
            "noderesources",
            "test case for ScoringStrategy LeastAllocated with Extended resources"
            " if PreScore is not called",
        ),
        ("podtopologyspread", "default constraints and a replicaset"),
        ("podtopologyspread", "default constraints and a replicaset that doesn't match"),
        ("podtopologyspread", "default constraints and a replicaset, but pod has constraints"),
        (
            "podtopologyspread",
            "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        ),
        ("podtopologyspread", "matchLabelKeys ignored when feature gate disabled"),
        ("podtopologyspread", "matchLabelKeys ignored when feature gate disabled"),
        (
            "podtopologyspread",
            "no pod is matched when LabelSelector is nil when feature gate disabled",
        ),
        ("podtopologyspread", "system default constraints and a replicaset"),
        ("podtopologyspread", "the pod doesn't have soft topology spread Constraints"),
    }
)

DECLARED = "UPSTREAM_NOT_PORTED"  # the dict a plugin's test module declares its reasons in
_FUNC = re.compile(r"^func (Test\w+|Benchmark\w+)\(", re.MULTILINE)
_LITERAL = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'
# A name is one string literal or several joined with `+` over lines; then `,` and the line end.
_NAME = re.compile(
    rf"^[ \t]+name:[ \t]+((?:{_LITERAL})(?:\s*\+\s*(?:{_LITERAL}))*),?[ \t]*$", re.MULTILINE
)


@dataclass(frozen=True, slots=True)
class Case:
    folder: str  # upstream plugin folder
    file: str  # test file, relative to the folder
    function: str  # the Go test function holding the table
    name: str


@dataclass(frozen=True, slots=True)
class Verdict:
    case: Case
    ported: bool
    reason: str  # "" when ported; None never: an unexplained case has reason UNEXPLAINED


UNEXPLAINED = "UNEXPLAINED: plugin implemented, case neither ported nor given a reason"


def source_root() -> Path:
    return module_cache() / f"k8s.io/kubernetes@{KUBERNETES}" / PLUGINS_DIR


def upstream_cases(root: Path | None = None) -> list[Case]:
    """Every `name:` string of every *_test.go under each plugin folder, in file order."""
    root = source_root() if root is None else root
    cases: list[Case] = []
    for test_file in sorted(root.glob("*/**/*_test.go")):
        folder = test_file.relative_to(root).parts[0]
        text = test_file.read_text()
        functions = [(m.start(), m.group(1)) for m in _FUNC.finditer(text)]
        for match in _NAME.finditer(text):
            function = next(
                (name for start, name in reversed(functions) if start < match.start()), ""
            )
            cases.append(
                Case(
                    folder=folder,
                    file=str(test_file.relative_to(root / folder)),
                    function=function,
                    name="".join(map(_go_string, re.findall(_LITERAL, match.group(1)))),
                )
            )
    return cases


def _go_string(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    value: str = json.loads(literal)  # Go's escapes in these names are JSON's
    return value


def _test_modules(folder: Path) -> list[ast.Module]:
    paths = sorted(folder.rglob("*.py")) if folder.is_dir() else []
    return [ast.parse(path.read_text()) for path in paths]


def ported_ids(folder: Path = PORTED_TESTS) -> set[str]:
    """The ids given to pytest params in the plugin tests: `id="..."` and `ids=[...]`."""
    ids: set[str] = set()
    for module in _test_modules(folder):
        for node in ast.walk(module):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if keyword.arg == "id" and isinstance(keyword.value, ast.Constant):
                    ids.add(str(keyword.value.value))
                elif keyword.arg == "ids" and isinstance(keyword.value, ast.List | ast.Tuple):
                    ids.update(
                        str(e.value) for e in keyword.value.elts if isinstance(e, ast.Constant)
                    )
    return ids


def declared_reasons(folder: Path = PORTED_TESTS) -> dict[str, str]:
    """Every test module's `UPSTREAM_NOT_PORTED` dict literal, merged."""
    reasons: dict[str, str] = {}
    for module in _test_modules(folder):
        for statement in module.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                target, value = statement.target, statement.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id == DECLARED:
                reasons.update(ast.literal_eval(value))
    return reasons


def registered_plugins() -> set[str]:
    """The names in our `plugins.IN_TREE` registry (empty before the registry exists)."""
    package = importlib.import_module(PLUGINS_PACKAGE)
    registry: Mapping[str, object] = getattr(package, "IN_TREE", {})
    return set(registry)


def implemented(folder: str, registered: set[str]) -> bool:
    if folder == "helper":
        return importlib.util.find_spec(HELPER_MODULE) is not None
    return any(name in registered for name in FOLDER_PLUGINS.get(folder, ()))


def verdicts(
    cases: Iterable[Case],
    ids: set[str],
    registered: set[str],
    not_ported: Mapping[str, str] | None = None,
    pending: frozenset[tuple[str, str]] = PENDING,
) -> list[Verdict]:
    """`not_ported`: declared reasons by case name or `<TestFunction>/*`; `pending`: the
    ratchet of cases still waiting for a port or a reason."""
    not_ported = {} if not_ported is None else not_ported
    out = []
    for case in cases:
        scope = OUT_OF_SCOPE.get(f"{case.folder}/{case.file}") or OUT_OF_SCOPE.get(case.folder)
        by_function = next((r for p, r in FUNCTION_REASONS if p.search(case.function)), None)
        if case.name in ids:
            out.append(Verdict(case, ported=True, reason=""))
        elif scope is not None:
            out.append(Verdict(case, ported=False, reason=scope))
        elif by_function is not None:
            out.append(Verdict(case, ported=False, reason=by_function))
        elif not implemented(case.folder, registered):
            out.append(Verdict(case, ported=False, reason=NOT_IMPLEMENTED))
        else:
            reason = not_ported.get(case.name) or not_ported.get(f"{case.function}/*")
            if reason is None and (case.folder, case.name) in pending:
                reason = PENDING_REASON
            reason = reason or UNEXPLAINED
            out.append(Verdict(case, ported=False, reason=reason))
    return out


def current() -> list[Verdict]:
    return verdicts(upstream_cases(), ported_ids(), registered_plugins(), declared_reasons())


def render(all_verdicts: list[Verdict]) -> str:
    lines = [
        "# kube-scheduler's plugin tests, case by case",
        "",
        "<!-- Generated by `python -m tests.support.scheduler_test_inventory > "
        "docs/scheduler-tests.md`;",
        "     tests/unit/controllers/scheduler/test_upstream_plugin_tests.py fails when this "
        "page differs. -->",
        "",
        f"Every named case (`name:`) of the table tests in `{PLUGINS_DIR}/<folder>/*_test.go` of",
        f"kube-scheduler {KUBERNETES}, with its verdict: **ported** (a test under",
        "`tests/unit/controllers/scheduler/plugins` has that name as its id) or **not ported** and",
        "why. A case of a plugin we implement must be ported or given a reason (its test module's",
        "`UPSTREAM_NOT_PORTED`); the test above fails otherwise.",
        "",
        "| Folder | Plugins | Cases | Ported | Not ported |",
        "|---|---|---:|---:|---:|",
    ]
    by_folder: dict[str, list[Verdict]] = {}
    for verdict in all_verdicts:
        by_folder.setdefault(verdict.case.folder, []).append(verdict)
    for folder, folder_verdicts in sorted(by_folder.items()):
        ported = sum(v.ported for v in folder_verdicts)
        plugins = ", ".join(FOLDER_PLUGINS.get(folder, ("(shared helpers)",)))
        lines.append(
            f"| {folder} | {plugins} | {len(folder_verdicts)} | {ported} | "
            f"{len(folder_verdicts) - ported} |"
        )
    total = len(all_verdicts)
    ported_total = sum(v.ported for v in all_verdicts)
    lines.append(f"| **all** | | **{total}** | **{ported_total}** | **{total - ported_total}** |")
    for folder, folder_verdicts in sorted(by_folder.items()):
        lines += ["", f"## {folder}", "", "| Test | Case | Verdict |", "|---|---|---|"]
        for verdict in folder_verdicts:
            case = verdict.case
            where = f"{case.file} {case.function}".strip()
            said = "ported" if verdict.ported else f"not ported: {verdict.reason}"
            lines.append(f"| {_cell(where)} | {_cell(case.name)} | {_cell(said)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


if __name__ == "__main__":
    sys.stdout.write(render(current()))
