"""Random cpu/memory-only clusters preempted by our DefaultPreemption and by kube-scheduler
v1.37.2's: the same victims on every node, the same candidates, the same node chosen.

For each generated scenario (tests/support/preemption_scenarios.py) the scheduler oracle runs
upstream's DefaultPreemption through its own exported code (SelectVictimsOnNode on every
potential node, then PodEligibleToPreemptOthers, DryRunPreemption and SelectCandidate) and
this test runs ours on the same snapshot, budgets, args and dry-run offset. Compared: the
Filter codes PostFilter starts from, the potential nodes, per potential node the victims (in
order), their budget violations and the status when there are none, the eligibility verdict,
the number of candidates wanted, the dry run's candidates in order, the chosen node and the
PostFilter status text.

One difference is allowed, because upstream makes it at random: the chosen node when two
candidates tie on all five of upstream's criteria (the last of which, the start of the most
important victims, ties when neither has started or both started in the same second; upstream
then takes the first node of a map's iteration order, we the first candidate found).

PREEMPTION_DIFF_SCENARIOS sets the count (200 in `make test`, 3,000 in `make test-full`);
PREEMPTION_DIFF_SEED the first seed (random by default, printed on failure: replay one scenario
with PREEMPTION_DIFF_SEED=<seed> PREEMPTION_DIFF_SCENARIOS=1).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from tests.support.counts import scaled
from tests.support.preemption_scenarios import preemption_scenario
from tests.support.scheduler_oracle import SchedulerOracle, running_scheduler_oracle

from dra_operator import model
from dra_operator.controllers.scheduler import framework, plugins
from dra_operator.controllers.scheduler.plugins.defaultpreemption import (
    DefaultPreemption,
    chosen_candidate,
)
from dra_operator.controllers.scheduler.plugins.defaultpreemption._candidates import dry_run
from dra_operator.controllers.scheduler.plugins.defaultpreemption._victims import (
    select_victims_on_node,
)

JSON = dict[str, Any]


@pytest.fixture(scope="module")
def oracle() -> Iterator[SchedulerOracle]:
    yield from running_scheduler_oracle()


def our_profile(scn: Mapping[str, Any]) -> framework.Profile:
    """kube-scheduler's default profile without DynamicResources (as the oracle's), with the
    scenario's DefaultPreemption args."""
    profile, _ = plugins.default_profile("default-scheduler", plugins.IN_TREE)
    keep = tuple(n for n in profile.multi_point if n != "DynamicResources")
    args = {
        entry["name"]: entry["args"] for entry in (scn.get("config") or {}).get("pluginConfig", [])
    }
    return dataclasses.replace(profile, multi_point=keep, args=model.FrozenMap(args))


def status_json(status: framework.Status) -> JSON:
    return {"code": status.code.value, "reasons": list(status.reasons), "plugin": status.plugin}


def names(pods: Sequence[model.Pod]) -> list[str]:
    return [f"{p.metadata.namespace}/{p.metadata.name}" for p in pods]


def our_preemption(scn: Mapping[str, Any]) -> JSON:
    """Our answers to the oracle's questions, in the oracle's words."""
    nodes = [model.parse_node(raw) for raw in scn["nodes"]]
    pods = [model.parse_pod(raw) for raw in scn["pods"]]
    preemptor = model.parse_pod(scn["pod"])
    budgets = [model.parse_pod_disruption_budget(raw) for raw in scn["podDisruptionBudgets"]]
    handle = framework.FrameworkHandle(pod_disruption_budgets=lambda: budgets)
    runtime = framework.Framework(our_profile(scn), plugins.IN_TREE, handle=handle)
    plugin = runtime.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    plugin.offset = lambda n: scn["offset"] % n
    snapshot = framework.build_snapshot(nodes, pods)
    runtime.start_cycle(snapshot)
    state = framework.CycleState()
    result, status, narrowing = runtime.run_pre_filter(state, preemptor, snapshot.node_infos)
    statuses = framework.NodeToStatus([n.name for n in snapshot])
    verdicts: dict[str, framework.Status] = {}
    if not status.ok:
        statuses.absent = status
    else:
        wanted = result.node_names if result is not None else None
        absent = framework.Status(
            framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
        )
        for info in snapshot:
            verdict = absent
            if wanted is None or info.name in wanted:
                verdict = runtime.run_filter(state, preemptor, info)
            verdicts[info.name] = verdict
            if not verdict.ok:
                statuses.explicit[info.name] = verdict
    potential = [n for n in snapshot if statuses[n.name].code is framework.Code.UNSCHEDULABLE]
    victims = {}
    for info in potential:
        found, violations, why = select_victims_on_node(
            handle, state.clone(), preemptor, info.clone(), budgets
        )
        victims[info.name] = {
            "pods": names(found),
            "numPDBViolations": violations,
            "status": status_json(why),
        }
    eligible = plugin.eligible(preemptor, statuses[preemptor.status.nominated_node_name])
    candidates = []
    offset = wanted_count = 0
    if not eligible and potential:
        offset = plugin.offset(len(potential))
        wanted_count = plugin.num_candidates(len(potential))
        found_candidates, _ = dry_run(
            handle, state, preemptor, potential, budgets, offset, wanted_count
        )
        candidates = [
            {"node": c.node, "pods": names(c.victims), "numPDBViolations": c.num_pdb_violations}
            for c in found_candidates
        ]
    _, final = plugin.post_filter(state, preemptor, statuses)
    chosen = chosen_candidate(state)
    return {
        "prefilter": status.code.value,
        "filter": {name: status_json(v) for name, v in verdicts.items()},
        "potentialNodes": [n.name for n in potential],
        "victims": victims,
        "eligible": eligible,
        "offset": offset,
        "numCandidates": wanted_count,
        "candidates": candidates,
        "chosen": chosen.node if chosen is not None else "",
        "status": {"code": final.code.value, "reasons": list(final.reasons)},
    }


_NOT_STARTED = datetime.datetime.max.replace(tzinfo=datetime.UTC)


def upstream_order(scn: Mapping[str, Any], candidate: Mapping[str, Any]) -> tuple[Any, ...]:
    """What upstream's pickOneNodeForPreemption compares, written here on its own so that the
    tie check does not lean on the code under test: budget violations, the priority of the
    first (most important) victim, the priority sum, the victim count, and the earliest start
    among the highest-priority victims (not started: later than any start)."""
    by_name = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in scn["pods"]}
    victims = [by_name[name] for name in candidate["pods"]]
    priorities = [v["spec"]["priority"] for v in victims]
    top = max(priorities)
    starts = [
        datetime.datetime.fromisoformat(v["status"]["startTime"])
        if "startTime" in v["status"]
        else _NOT_STARTED
        for v, p in zip(victims, priorities, strict=True)
        if p == top
    ]
    return (
        candidate["numPDBViolations"],
        priorities[0],
        sum(priorities),
        len(victims),
        min(starts),
    )


@dataclasses.dataclass
class Tally:
    scenarios: int = 0
    potential_nodes: int = 0
    victims: int = 0
    outcomes: Counter[str] = dataclasses.field(default_factory=Counter)
    ties: int = 0


def compare(scn: Mapping[str, Any], upstream: JSON, ours: JSON, tally: Tally) -> list[str]:
    """What differs, in words; counts into `tally` what was compared."""
    problems: list[str] = []
    upstream_codes = {n: s["code"] for n, s in upstream["filter"].items()}
    our_codes = {n: s["code"] for n, s in ours["filter"].items()}
    if upstream["prefilter"]["code"] != ours["prefilter"] or upstream_codes != our_codes:
        return [
            f"prefilter and filter codes: upstream {upstream['prefilter']['code']} "
            f"{upstream_codes}, ours {ours['prefilter']} {our_codes}"
        ]
    for key in ("potentialNodes", "eligible", "offset", "numCandidates", "candidates"):
        if upstream[key] != ours[key]:
            problems.append(f"{key}: upstream {upstream[key]}, ours {ours[key]}")
    for node, theirs in sorted(upstream["victims"].items()):
        mine = ours["victims"].get(node)
        tally.potential_nodes += 1
        tally.victims += len(theirs["pods"])
        if mine != theirs:
            problems.append(f"victims on {node}: upstream {theirs}, ours {mine}")
    if upstream["chosen"] != ours["chosen"]:
        by_node = {c["node"]: c for c in upstream["candidates"]}
        theirs_c, mine_c = by_node.get(upstream["chosen"]), by_node.get(ours["chosen"])
        tied = (
            theirs_c is not None
            and mine_c is not None
            and upstream_order(scn, theirs_c) == upstream_order(scn, mine_c)
        )
        if not tied:
            problems.append(f"chosen: upstream {upstream['chosen']!r}, ours {ours['chosen']!r}")
        else:
            tally.ties += 1
    else:
        theirs_status = {k: upstream["status"][k] for k in ("code", "reasons")}
        if theirs_status != ours["status"]:
            problems.append(f"status: upstream {theirs_status}, ours {ours['status']}")
    outcome = "preempted" if upstream["chosen"] else upstream["eligible"] or "no candidate"
    tally.outcomes[outcome] += 1
    tally.scenarios += 1
    return problems


def test_random_preemptions_agree_with_kube_scheduler(
    oracle: SchedulerOracle, capsys: pytest.CaptureFixture[str]
) -> None:
    count = int(os.environ.get("PREEMPTION_DIFF_SCENARIOS", str(scaled(200, 3000))))
    first = int(os.environ.get("PREEMPTION_DIFF_SEED", str(random.randrange(2**31))))
    tally = Tally()
    failures: list[str] = []
    for seed in range(first, first + count):
        scn = preemption_scenario(seed)
        problems = compare(scn, oracle.preempt(scn), our_preemption(scn), tally)
        if problems:
            failures.append(f"seed {seed}:\n  " + "\n  ".join(problems))
    summary = (
        f"{tally.scenarios} scenarios from seed {first}: {tally.potential_nodes} potential "
        f"nodes, {tally.victims} victims, outcomes {dict(sorted(tally.outcomes.items()))}, "
        f"{tally.ties} chosen nodes tied upstream"
    )
    with capsys.disabled():
        print(f"\npreemption differential: {summary}")
    assert not failures, (
        f"{len(failures)} of {count} scenarios disagree (replay one with PREEMPTION_DIFF_SEED="
        f"<seed> PREEMPTION_DIFF_SCENARIOS=1); {summary}\n" + "\n".join(failures[:20])
    )
