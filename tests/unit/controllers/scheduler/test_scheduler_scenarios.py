"""The scenario generator: a seed names one scenario, and the draws reach what they should."""

from __future__ import annotations

from tests.support.scheduler_scenarios import scenario


def test_a_seed_names_one_scenario() -> None:
    assert scenario(7) == scenario(7)
    assert scenario(7) != scenario(8)


def test_placed_pods_name_existing_nodes_and_the_incoming_pod_none() -> None:
    for seed in range(100):
        drawn = scenario(seed)
        nodes = {n["metadata"]["name"] for n in drawn["nodes"]}
        assert all(p["spec"]["nodeName"] in nodes for p in drawn["pods"])
        assert "nodeName" not in drawn["pod"]["spec"]


def test_volumes_claims_and_affinity_all_occur() -> None:
    drawn = [scenario(seed) for seed in range(300)]
    incoming = [d["pod"]["spec"] for d in drawn]
    assert any(d["persistentVolumeClaims"] for d in drawn)
    assert any("local" in v["spec"] for d in drawn for v in d["persistentVolumes"])
    assert any(spec.get("volumes") for spec in incoming)
    assert any("podAntiAffinity" in spec.get("affinity", {}) for spec in incoming)
    assert any(spec.get("topologySpreadConstraints") for spec in incoming)
    assert any(n["spec"].get("taints") for d in drawn for n in d["nodes"])
