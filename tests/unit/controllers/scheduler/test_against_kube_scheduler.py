"""Random clusters placed by our framework and by kube-scheduler v1.37.2: the same verdicts.

For each generated scenario (tests/support/scheduler_scenarios.py) the scheduler oracle runs
upstream's default profile and our `framework.evaluate` runs ours; per node the Filter verdict
(code, rejecting plugin, reason texts) and per plugin the normalized scores must agree.

Only the plugins registered in our `plugins.IN_TREE` are compared, so the test grows as plugins
land; what upstream decided through a plugin we do not have yet is left out (a node rejected
first by such a plugin, the scores of a scenario whose feasible set it changed). The test prints
which plugins it compared and how many verdicts.

SCHEDULER_DIFF_SCENARIOS sets the count (1,000 by default); SCHEDULER_DIFF_SEED the first seed
(random by default, printed on failure, so a failing scenario is replayed with
SCHEDULER_DIFF_SEED=<seed> SCHEDULER_DIFF_SCENARIOS=1).
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from tests.support.scheduler_oracle import SchedulerOracle, running_scheduler_oracle
from tests.support.scheduler_scenarios import scenario

from dra_operator import model
from dra_operator.controllers.scheduler import framework, plugins

OUT_OF_SCOPE = frozenset({"DynamicResources", "DefaultPreemption"})  # as the oracle leaves out


@pytest.fixture(scope="module")
def oracle() -> Iterator[SchedulerOracle]:
    yield from running_scheduler_oracle()


def registry() -> Mapping[str, Any]:
    registered: Mapping[str, Any] = getattr(plugins, "IN_TREE", {})
    missing = [
        what
        for what, there in (
            ("framework.build_snapshot", hasattr(framework, "build_snapshot")),
            ("framework.evaluate", hasattr(framework, "evaluate")),
            ("plugins.IN_TREE", bool(registered)),
        )
        if not there
    ]
    if missing:
        pytest.skip(f"not implemented yet: {', '.join(missing)}")
    return registered


def our_profile(registered: Mapping[str, Any]) -> framework.Profile:
    """kube-scheduler's default profile as ours writes it, reduced to what is registered."""
    profile, _ = plugins.default_profile("default-scheduler", registered)
    keep = tuple(n for n in profile.multi_point if n not in OUT_OF_SCOPE)
    return dataclasses.replace(profile, multi_point=keep)


class ScenarioHandle:
    """The handle plugins read for one scenario: the cycle's snapshot (set by the framework at
    the start of the cycle), namespaces' labels (InterPodAffinity's namespaceSelector) and the
    storage listers the volume plugins use, filled from the scenario's objects once the model
    parses them (the volume plugins' merge brings both)."""

    def __init__(self, scn: Mapping[str, Any]) -> None:
        self.snapshot: framework.Snapshot = framework.Snapshot(())
        self._namespaces: dict[str, Mapping[str, str]] = {
            ns["metadata"]["name"]: ns["metadata"].get("labels", {}) for ns in scn["namespaces"]
        }
        self._pvcs: dict[tuple[str, str], Any] = {}
        self._pvs: dict[str, Any] = {}
        self._classes: dict[str, Any] = {}
        self._csi_nodes: dict[str, Any] = {}
        self._csi_drivers: dict[str, Any] = {}
        if not hasattr(model, "parse_persistent_volume"):
            return
        for claim in map(model.parse_persistent_volume_claim, scn["persistentVolumeClaims"]):
            self._pvcs[(claim.metadata.namespace, claim.metadata.name)] = claim
        self._pvs = {
            v.name: v for v in map(model.parse_persistent_volume, scn["persistentVolumes"])
        }
        self._classes = {c.name: c for c in map(model.parse_storage_class, scn["storageClasses"])}
        self._csi_nodes = {c.name: c for c in map(model.parse_csi_node, scn["csiNodes"])}
        self._csi_drivers = {d.name: d for d in map(model.parse_csi_driver, scn["csiDrivers"])}

    def set_snapshot(self, snapshot: framework.Snapshot) -> None:
        self.snapshot = snapshot

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self._namespaces.get(name)

    def pvc(self, namespace: str, name: str) -> Any:
        return self._pvcs.get((namespace, name))

    def pv(self, name: str) -> Any:
        return self._pvs.get(name)

    def pvs(self, storage_class: str) -> list[Any]:
        found = (v for v in self._pvs.values() if v.storage_class == storage_class)
        return sorted(found, key=lambda v: v.name)

    def storage_class(self, name: str) -> Any:
        return self._classes.get(name)

    def csi_node(self, name: str) -> Any:
        return self._csi_nodes.get(name)

    def csi_driver(self, name: str) -> Any:
        return self._csi_drivers.get(name)


def our_evaluation(
    profile: framework.Profile, registered: Mapping[str, Any], scn: Mapping[str, Any]
) -> Any:
    """The one place that speaks the runtime's API: parse, snapshot, evaluate."""
    nodes = [model.parse_node(raw) for raw in scn["nodes"]]
    pods = [model.parse_pod(raw) for raw in scn["pods"]]
    snapshot = framework.build_snapshot(nodes, pods)
    runtime = framework.Framework(profile, registered, handle=ScenarioHandle(scn))
    return framework.evaluate(runtime, model.parse_pod(scn["pod"]), snapshot)


def status_of(status: Any) -> dict[str, Any]:
    return {"code": status.code.value, "reasons": list(status.reasons), "plugin": status.plugin}


@dataclasses.dataclass
class Tally:
    scenarios: int = 0
    prefilter: int = 0
    nodes: int = 0
    nodes_skipped: int = 0
    scores: Counter[str] = dataclasses.field(default_factory=Counter)


_NARROWED = "node(s) didn't satisfy plugin(s) ["


def decided_by(status: Mapping[str, Any]) -> set[str]:
    """The plugins behind a node's verdict: the rejecting one, or those whose PreFilter result
    left the node out (their names are in upstream's text), or none for Success."""
    if status["plugin"]:
        return {status["plugin"]}
    reasons = status["reasons"]
    if status["code"] != "Success" and reasons and reasons[0].startswith(_NARROWED):
        return set(reasons[0][len(_NARROWED) : -1].split())
    return set()


def compare(
    upstream: Mapping[str, Any],
    ours: Any,
    compared: frozenset[str],
    filter_order: Sequence[str],
    tally: Tally,
) -> list[str]:
    """What differs, in words; counts into `tally` what could be compared."""
    problems: list[str] = []
    pre = {k: upstream["prefilter"][k] for k in ("code", "reasons", "plugin")}
    if pre["code"] != "Success":
        if pre["plugin"] in compared:
            tally.prefilter += 1
            if status_of(ours.prefilter) != pre:
                problems.append(f"prefilter: upstream {pre}, ours {status_of(ours.prefilter)}")
        return problems
    if ours.prefilter.rejects and ours.prefilter.plugin in compared:
        return [f"prefilter: upstream Success, ours {status_of(ours.prefilter)}"]
    for name, theirs in sorted(upstream["filter"].items()):
        mine = ours.filter.get(name)
        deciders = decided_by(theirs)
        if not deciders <= compared:
            tally.nodes_skipped += 1  # decided by a plugin we do not run: ours may go further
            if theirs["plugin"] and mine is not None and mine.rejects:
                later = filter_order[filter_order.index(theirs["plugin"]) + 1 :]
                if mine.plugin not in later:
                    problems.append(f"filter {name}: upstream {theirs}, ours {status_of(mine)}")
            continue
        tally.nodes += 1
        if mine is None or status_of(mine) != theirs:
            got = None if mine is None else status_of(mine)
            problems.append(f"filter {name}: upstream {theirs}, ours {got}")
    upstream_feasible = {n for n, s in upstream["filter"].items() if s["code"] == "Success"}
    our_feasible = {n for n, s in ours.filter.items() if s.ok}
    if problems or upstream_feasible != our_feasible:
        return problems  # normalization depends on the feasible set: scores not comparable
    if upstream.get("scoreStatus") or not ours.score_status.ok:
        theirs_score = upstream.get("scoreStatus") or {
            "code": "Success",
            "reasons": [],
            "plugin": "",
        }
        if status_of(ours.score_status) != theirs_score:
            problems.append(f"score: upstream {theirs_score}, ours {status_of(ours.score_status)}")
        return problems
    for plugin, per_node in sorted(upstream["scores"].items()):
        if plugin not in compared:
            continue
        tally.scores[plugin] += len(per_node)
        mine_scores = dict(ours.scores.get(plugin, {}))
        if mine_scores != per_node:
            problems.append(f"scores {plugin}: upstream {per_node}, ours {mine_scores}")
    if set(upstream["scores"]) <= compared and not problems and ours.total != upstream["total"]:
        problems.append(f"total: upstream {upstream['total']}, ours {dict(ours.total)}")
    return problems


def test_random_scenarios_agree_with_kube_scheduler(
    oracle: SchedulerOracle, capsys: pytest.CaptureFixture[str]
) -> None:
    registered = registry()
    profile = our_profile(registered)
    upstream_profile = oracle.profile()
    upstream_points = {
        point: [p["name"] for p in entries]
        for point, entries in upstream_profile["plugins"].items()
    }
    compared = frozenset(profile.multi_point)
    count = int(os.environ.get("SCHEDULER_DIFF_SCENARIOS", "1000"))
    first = int(os.environ.get("SCHEDULER_DIFF_SEED", str(random.randrange(2**31))))
    tally = Tally()
    failures: list[str] = []
    for seed in range(first, first + count):
        scn = scenario(seed)
        upstream = oracle.schedule(scn)
        ours = our_evaluation(profile, registered, scn)
        tally.scenarios += 1
        problems = compare(upstream, ours, compared, upstream_points["filter"], tally)
        if problems:
            failures.append(f"seed {seed}:\n  " + "\n  ".join(problems))
    summary = (
        f"compared plugins {sorted(compared)} over {tally.scenarios} scenarios from seed "
        f"{first}: {tally.prefilter} PreFilter rejections, {tally.nodes} node verdicts "
        f"({tally.nodes_skipped} decided upstream by plugins not compared), scores "
        f"{dict(sorted(tally.scores.items()))}"
    )
    with capsys.disabled():
        print(f"\nscheduler differential: {summary}")
    assert not failures, (
        f"{len(failures)} of {count} scenarios disagree (replay one with SCHEDULER_DIFF_SEED="
        f"<seed> SCHEDULER_DIFF_SCENARIOS=1); {summary}\n" + "\n".join(failures[:20])
    )
