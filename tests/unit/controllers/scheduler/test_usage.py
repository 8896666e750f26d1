"""Node usage: sums of placed pods' requests, kept from watch events and our own decisions."""

from __future__ import annotations

from dra_operator.controllers.scheduler import NodeUsage
from dra_operator.model import Pod, Quantity, parse_pod

from .builders import pod


def _cpu(usage: NodeUsage, node: str) -> tuple[Quantity | None, int]:
    found = usage.on_node(node)
    return found.requested.get("cpu"), found.pods


def test_bound_pods_sum_per_node_and_leave_exactly() -> None:
    usage = NodeUsage()
    a = parse_pod(pod("a", cpu="1", node_name="n1"))
    b = parse_pod(pod("b", cpu="500m", node_name="n1"))
    usage.pod_changed(a)
    usage.pod_changed(b)
    usage.pod_changed(b)  # an update counts once
    assert _cpu(usage, "n1") == (Quantity.parse("1500m"), 2)
    usage.forget(a.metadata.uid)
    usage.forget(b.metadata.uid)
    assert _cpu(usage, "n1") == (None, 0)


def test_assumed_pod_counts_until_the_watch_shows_it_and_is_not_counted_twice() -> None:
    usage = NodeUsage()
    unbound = parse_pod(pod("a", cpu="1"))
    usage.assume(unbound, "n1")
    usage.pod_changed(unbound)  # the watch still shows it without a node: keep the assumption
    assert _cpu(usage, "n1") == (Quantity.parse("1"), 1)
    assert usage.node_of(unbound.metadata.uid) == "n1"
    bound = parse_pod({**pod("a", cpu="1", node_name="n1"), "metadata": unbound_meta(unbound)})
    usage.pod_changed(bound)
    assert _cpu(usage, "n1") == (Quantity.parse("1"), 1)


def unbound_meta(p: Pod) -> dict[str, str]:
    meta = p.metadata
    return {"name": meta.name, "namespace": meta.namespace, "uid": meta.uid}


def test_finished_pods_do_not_count() -> None:
    usage = NodeUsage()
    raw = pod("a", cpu="1", node_name="n1")
    usage.pod_changed(parse_pod(raw))
    raw["status"] = {"phase": "Succeeded"}
    usage.pod_changed(parse_pod(raw))
    assert _cpu(usage, "n1") == (None, 0)
