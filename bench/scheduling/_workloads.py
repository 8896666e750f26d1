"""The benchmark workloads, modelled on upstream's scheduler_perf DRA tests.

Every workload is plain API objects (nodes' slices, classes, templates, claims) and pod specs,
sized from `--scale`: scale 1 is 20 nodes; devices per node follow the upstream test each one
mirrors (10, or 2 for shared claims, 8 in `s`). A workload has one or more phases; a fill phase
creates all its pods at once (or at the creator's fixed rate), a steady-state phase keeps
`in_flight` pods at a time, deleting each one as soon as it is bound with its claims allocated
and reserved (upstream's SteadyStateClusterResourceClaimTemplate). Pre-allocated claims are
written by the bench itself, as scheduler_perf's `allocResourceClaims` op does, before the phase
starts. Workload `s` is ClusterLoader2's `dra-steady-state` (perf-tests, clusterloader2
testing/dra): 8 devices per node filled to 90 % by pods that stay, then pods created at a fixed
rate for a set time, each deleted once done. Workload `p` places gangs: PodGroups of 8 pods
that must be bound whole (GenericWorkload), counting groups left bound in part. Workload `i`
spreads replicas as scheduler_perf's SchedulingPodAntiAffinity and TopologySpreading cases do
(required anti-affinity on the hostname, maxSkew 1 over three zones), one claim each.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "CHURN_RATE",
    "CHURN_SECONDS",
    "CLAIM_FINALIZER",
    "DRIVER",
    "WORKLOADS",
    "ZONE",
    "Phase",
    "Workload",
    "build",
    "placement_faults",
]

DRIVER = "bench.example.com"
CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"
_DEVICES = 10
_STEADY_IN_FLIGHT = 10
_STEADY_MAX_PODS = 1000
"""Pods per steady-state phase: 5 per node, capped so that 500 nodes take minutes, not 20."""
CHURN_DEVICES = 8
CHURN_FILL_PERCENT = 90
CHURN_RATE = 5.0
"""Pods per second created (and deleted) after the fill: ClusterLoader2's steady-state QPS."""
CHURN_SECONDS = 60.0
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"

Manifest = dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Phase:
    """One measured run of pods; `preallocate` counts claims that exist allocated before it.

    `rate`: pods created per second in this phase whatever the creator's own rate (the churn of
    `s`); `churn`: each pod is deleted once done; `keep_previous`: the pods of the phase before
    stay (the fill under the churn) instead of being deleted before this one starts.
    """

    name: str
    pods: int
    in_flight: int | None = None
    preallocate: int = 0
    rate: float | None = None
    churn: bool = False
    keep_previous: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """Everything one workload creates, the same for both systems."""

    key: str
    title: str
    nodes: tuple[str, ...]
    slices: tuple[Manifest, ...]
    classes: tuple[Manifest, ...]
    templates: tuple[Manifest, ...]
    claims: tuple[Manifest, ...]
    pod_claims: Callable[[int], list[Manifest]]
    phases: tuple[Phase, ...]
    device_order: tuple[tuple[str, str], ...] = ()
    """(node, device) in the order pre-allocated claims take them."""
    group_size: int = 0
    """Pods per PodGroup (gang, `minCount` = the size); 0: the pods belong to no group."""
    node_labels: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    """Labels per node beyond the hostname and OS every fake node has."""
    pod_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    placement: Manifest = dataclasses.field(default_factory=dict)
    """Pod spec fields that constrain where a pod goes (affinity, topologySpreadConstraints)."""

    def pod_groups(self, pods: int, namespace: str) -> list[Manifest]:
        """The PodGroups (scheduling.k8s.io/v1beta1, GenericWorkload) of `pods` pods."""
        if not self.group_size:
            return []
        return [
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": f"gang-{g:04d}", "namespace": namespace},
                "spec": {"schedulingPolicy": {"gang": {"minCount": self.group_size}}},
            }
            for g in range(-(-pods // self.group_size))
        ]

    def group_of(self, index: int) -> str | None:
        """The PodGroup of the index-th pod."""
        return f"gang-{index // self.group_size:04d}" if self.group_size else None

    def pod(self, index: int, namespace: str, scheduler: str) -> Manifest:
        claims = self.pod_claims(index)
        group = self.group_of(index)
        scheduling = {"schedulingGroup": {"podGroupName": group}} if group else {}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"pod-{index:05d}",
                "namespace": namespace,
                **({"labels": dict(self.pod_labels)} if self.pod_labels else {}),
            },
            "spec": {
                **self.placement,
                "schedulerName": scheduler,
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": c["name"]} for c in claims]},
                    }
                ],
                "resourceClaims": claims,
                **scheduling,
            },
        }

    def preallocated_claim(self, index: int, namespace: str) -> tuple[Manifest, Manifest]:
        """A claim for one device and the status that allocates it to the index-th device."""
        node, device = self.device_order[index]
        claim = _claim(f"pre-{index:05d}", namespace, _exactly())
        claim["metadata"]["finalizers"] = [CLAIM_FINALIZER]
        status = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": node, "device": device}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                },
            }
        }
        return claim, {"status": status}


# -- objects -------------------------------------------------------------------------------------


def _device(index: int, **overrides: Any) -> Manifest:
    """scheduler_perf's test device: model, family, driverVersion, numa and 1Gi of memory."""
    attributes = {
        "model": {"string": "A100"},
        "family": {"string": "GPU"},
        "driverVersion": {"version": "1.2.3"},
        "numa": {"int": index // 5},
        **overrides.pop("attributes", {}),
    }
    return {
        "name": f"gpu-{index}",
        "attributes": attributes,
        "capacity": {"memory": {"value": "1Gi"}},
        **overrides,
    }


def _slice(node: str, devices: list[Manifest], *, suffix: str = "", count: int = 1) -> Manifest:
    spec: Manifest = {
        "driver": DRIVER,
        "nodeName": node,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
    }
    spec["devices"] = devices
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}{suffix}"},
        "spec": spec,
    }


def _class() -> Manifest:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def _exactly(count: int = 1, *, selectors: tuple[str, ...] = (), **extra: Any) -> Manifest:
    exactly: Manifest = {"deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": "gpu", "exactly": {**exactly, **extra}}


def _claim_spec(*requests: Manifest, constraints: tuple[Manifest, ...] = ()) -> Manifest:
    devices: Manifest = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"devices": devices}


def _claim(name: str, namespace: str, *requests: Manifest) -> Manifest:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": _claim_spec(*requests),
    }


def _template(spec: Manifest) -> Manifest:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu"},
        "spec": {"spec": spec},
    }


def _from_template(_: int) -> list[Manifest]:
    return [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]


def _attr(name: str) -> str:
    return f'device.attributes["{DRIVER}"].{name}'


# -- the workloads ---------------------------------------------------------------------------------


def _nodes(scale: float) -> tuple[str, ...]:
    return tuple(f"node-{n:03d}" for n in range(max(1, round(20 * scale))))


def _plain(
    key: str,
    title: str,
    scale: float,
    spec: Manifest,
    pods_per_node: int,
    devices: Mapping[int, Manifest] | None = None,
) -> Workload:
    """N nodes × 10 standard devices (some changed by `devices`), pods from one template."""
    nodes = _nodes(scale)
    changed = devices or {}
    return Workload(
        key=key,
        title=title,
        nodes=nodes,
        slices=tuple(
            _slice(n, [_device(i, **changed.get(i, {})) for i in range(_DEVICES)]) for n in nodes
        ),
        classes=(_class(),),
        templates=(_template(spec),),
        claims=(),
        pod_claims=_from_template,
        phases=(Phase(name=key, pods=pods_per_node * len(nodes)),),
    )


def fill(scale: float) -> Workload:
    return _plain("a", "fill: one-device template until full", scale, _claim_spec(_exactly()), 10)


def steady(scale: float) -> Workload:
    nodes = _nodes(scale)
    total = len(nodes) * _DEVICES
    measured = min(_STEADY_MAX_PODS, max(2 * _STEADY_IN_FLIGHT, 5 * len(nodes)))
    base = fill(scale)
    return dataclasses.replace(
        base,
        key="b",
        title="steady state: create, schedule, delete, 10 in flight",
        phases=tuple(
            Phase(name=f"b-{label}", pods=measured, in_flight=_STEADY_IN_FLIGHT, preallocate=pre)
            for label, pre in (
                ("empty", 0),
                ("half", total // 2),
                ("full", max(0, total - _STEADY_IN_FLIGHT)),
            )
        ),
        device_order=tuple((n, f"gpu-{i}") for n in nodes for i in range(_DEVICES)),
    )


def shared(scale: float) -> Workload:
    """scheduler_perf SchedulingWithResourceClaim: 2 devices per node, 5 pods per claim."""
    nodes = _nodes(scale)
    per_node = 2
    count = per_node * len(nodes)
    claims = tuple(_claim(f"shared-{k:04d}", "", _exactly()) for k in range(count))
    return Workload(
        key="c",
        title="shared claims: one claim per 5 pods",
        nodes=nodes,
        slices=tuple(_slice(n, [_device(i) for i in range(per_node)]) for n in nodes),
        classes=(_class(),),
        templates=(),
        claims=claims,
        pod_claims=lambda i: [{"name": "gpu", "resourceClaimName": f"shared-{i // 5:04d}"}],
        phases=(Phase(name="c", pods=5 * count),),
    )


def first_available(scale: float) -> Workload:
    """Two H100s per node for a two-device first choice, else any one device.

    A node then holds at most one pod of the first choice, so 9 pods per node always fit.
    """
    h100 = {"attributes": {"model": {"string": "H100"}}}
    first = {
        "name": "two-h100",
        "deviceClassName": DRIVER,
        "allocationMode": "ExactCount",
        "count": 2,
        "selectors": [{"cel": {"expression": f'{_attr("model")} == "H100"'}}],
    }
    fallback = {"name": "any", "deviceClassName": DRIVER, "allocationMode": "ExactCount"}
    spec = _claim_spec({"name": "gpu", "firstAvailable": [first, fallback]})
    title = "firstAvailable: two H100 else one device"
    return _plain("d", title, scale, spec, 9, {0: h100, 1: h100})


def cel_selectors(scale: float) -> Workload:
    """Half the devices run driver 0.9.0, so the semver half of the selector filters."""
    old = {"attributes": {"driverVersion": {"version": "0.9.0"}}}
    selector = (
        f'{_attr("driverVersion")}.isGreaterThan(semver("1.0.0")) && '
        f'device.capacity["{DRIVER}"].memory.compareTo(quantity("1Gi")) >= 0'
    )
    spec = _claim_spec(_exactly(selectors=(selector,)))
    old_devices = {i: old for i in range(1, _DEVICES, 2)}
    return _plain("e", "CEL selector: semver and quantity", scale, spec, 5, old_devices)


def match_attribute(scale: float) -> Workload:
    """Four devices on one NUMA node (5 per NUMA node): two pods per node."""
    constraint = {"requests": ["gpu"], "matchAttribute": f"{DRIVER}/numa"}
    spec = _claim_spec(_exactly(4), constraints=(constraint,))
    return _plain("f", "matchAttribute across 4 devices", scale, spec, 2)


def partitionable(scale: float) -> Workload:
    """Two GPUs per node, each whole or as four partitions sharing its memory counter."""
    nodes = _nodes(scale)
    gpus = 2
    slices = []
    for node in nodes:
        devices = []
        for g in range(gpus):
            for part, memory in ((None, "40Gi"), *((p, "10Gi") for p in range(4))):
                name = f"gpu-{g}" if part is None else f"gpu-{g}-part-{part}"
                kind = "whole" if part is None else "partition"
                devices.append(
                    {
                        "name": name,
                        "attributes": {"type": {"string": kind}},
                        "consumesCounters": [
                            {"counterSet": f"gpu-{g}", "counters": {"memory": {"value": memory}}}
                        ],
                    }
                )
        counters = [
            {"name": f"gpu-{g}", "counters": {"memory": {"value": "40Gi"}}} for g in range(gpus)
        ]
        counter_slice = _slice(node, [], suffix="-counters", count=2)
        counter_slice["spec"]["sharedCounters"] = counters
        del counter_slice["spec"]["devices"]
        slices += [_slice(node, devices, count=2), counter_slice]
    spec = _claim_spec(_exactly(selectors=(f'{_attr("type")} == "partition"',)))
    return Workload(
        key="g",
        title="partitionable devices: one partition of a shared GPU",
        nodes=nodes,
        slices=tuple(slices),
        classes=(_class(),),
        templates=(_template(spec),),
        claims=(),
        pod_claims=_from_template,
        phases=(Phase(name="g", pods=4 * gpus * len(nodes)),),
    )


def consumable_capacity(scale: float) -> Workload:
    """Two 100G NICs per node shared by capacity: 20G per claim, five claims per NIC."""
    nodes = _nodes(scale)
    nics = 2
    policy = {"default": "10G", "validRange": {"min": "10G", "step": "10G"}}
    slices = tuple(
        _slice(
            n,
            [
                {
                    "name": f"nic-{i}",
                    "allowMultipleAllocations": True,
                    "attributes": {"type": {"string": "nic"}},
                    "capacity": {"bandwidth": {"value": "100G", "requestPolicy": policy}},
                }
                for i in range(nics)
            ],
        )
        for n in nodes
    )
    spec = _claim_spec(_exactly(capacity={"requests": {"bandwidth": "20G"}}))
    return Workload(
        key="h",
        title="consumable capacity: 20G of a shared 100G NIC",
        nodes=nodes,
        slices=slices,
        classes=(_class(),),
        templates=(_template(spec),),
        claims=(),
        pod_claims=_from_template,
        phases=(Phase(name="h", pods=5 * nics * len(nodes)),),
    )


def dra_steady_state(
    scale: float, churn_rate: float = CHURN_RATE, churn_seconds: float = CHURN_SECONDS
) -> Workload:
    """ClusterLoader2's dra-steady-state: 8 devices per node, 90 % of them taken by pods that
    stay (`s-fill`), then `churn_rate` pods per second for `churn_seconds` (`s-churn`).

    ClusterLoader2's churn pods run 30 s on a kubelet; no kubelet runs these, so each is deleted
    as soon as it is bound with its claim allocated and reserved: deletes follow creates at the
    same rate, and the cluster stays at 90 % with every churn pod placed in the 10 % left.
    """
    nodes = _nodes(scale)
    devices = CHURN_DEVICES * len(nodes)
    return Workload(
        key="s",
        title=f"dra-steady-state: fill to 90 %, then {churn_rate:g} pods/s for {churn_seconds:g} s",
        nodes=nodes,
        slices=tuple(_slice(n, [_device(i) for i in range(CHURN_DEVICES)]) for n in nodes),
        classes=(_class(),),
        templates=(_template(_claim_spec(_exactly())),),
        claims=(),
        pod_claims=_from_template,
        phases=(
            Phase(name="s-fill", pods=max(1, devices * CHURN_FILL_PERCENT // 100)),
            Phase(
                name="s-churn",
                pods=max(1, round(churn_rate * churn_seconds)),
                rate=churn_rate,
                churn=True,
                keep_previous=True,
            ),
        ),
    )


GANG_SIZE = 8


def gang(scale: float) -> Workload:
    """Gangs of 8 pods (PodGroups with `gang.minCount: 8`, GenericWorkload), each pod with a
    one-device template claim, until the 10 devices per node are full: every group fits whole,
    and a group bound in part would be a failure of the all-or-nothing rule."""
    base = _plain("p", "gangs of 8: PodGroups placed whole", scale, _claim_spec(_exactly()), 10)
    pods = base.phases[0].pods - base.phases[0].pods % GANG_SIZE
    return dataclasses.replace(base, group_size=GANG_SIZE, phases=(Phase(name="p", pods=pods),))


SPREAD_ZONES = 3
_SPREAD_LABELS = {"app": "spread"}


def spread(scale: float) -> Workload:
    """Replicas kept apart: required anti-affinity on `kubernetes.io/hostname` (one per node)
    and a zone spread of maxSkew 1, DoNotSchedule, over three zones, each with a one-device
    template claim; pods for 4 of 5 nodes, as scheduler_perf's 500-node anti-affinity case
    (400 pods), so the last pods have few nodes left.
    """
    base = _plain(
        "i", "anti-affinity + zone spread, one claim each", scale, _claim_spec(_exactly()), 1
    )
    selector = {"matchLabels": dict(_SPREAD_LABELS)}
    placement = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": HOSTNAME}
                ]
            }
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            }
        ],
    }
    nodes = base.nodes
    return dataclasses.replace(
        base,
        node_labels={n: {ZONE: f"zone-{k % SPREAD_ZONES}"} for k, n in enumerate(nodes)},
        pod_labels=_SPREAD_LABELS,
        placement=placement,
        phases=(Phase(name="i", pods=max(1, len(nodes) * 4 // 5)),),
    )


def placement_faults(workload: Workload, node_of: Mapping[str, str]) -> str:
    """What the placement of `node_of` (pod name → node) breaks of `workload`'s constraints:
    a second pod on a node, or zones further apart than maxSkew 1; empty when none or when the
    workload has no constraints."""
    if not workload.placement:
        return ""
    per_node = collections.Counter(node_of.values())
    crowded = sum(1 for count in per_node.values() if count > 1)
    zones = {labels[ZONE] for labels in workload.node_labels.values()}
    per_zone = collections.Counter(workload.node_labels[n][ZONE] for n in node_of.values())
    skew = max(per_zone[z] for z in zones) - min(per_zone[z] for z in zones) if zones else 0
    faults = [f"{crowded} nodes with two pods"] if crowded else []
    if skew > 1:
        faults.append(f"zone skew {skew}")
    return ", ".join(faults)


WORKLOADS: dict[str, Callable[[float], Workload]] = {
    "a": fill,
    "b": steady,
    "c": shared,
    "d": first_available,
    "e": cel_selectors,
    "f": match_attribute,
    "g": partitionable,
    "h": consumable_capacity,
    "i": spread,
    "p": gang,
    "s": dra_steady_state,
}


def build(
    key: str,
    scale: float,
    *,
    churn_rate: float = CHURN_RATE,
    churn_seconds: float = CHURN_SECONDS,
) -> Workload:
    """The workload named `key` (a–i, p, s) at `scale`; the churn settings shape `s` only."""
    if key == "s":
        return dra_steady_state(scale, churn_rate, churn_seconds)
    return WORKLOADS[key](scale)
