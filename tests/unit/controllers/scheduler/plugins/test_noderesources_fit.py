"""NodeResourcesFit's Filter: upstream's TestEnoughRequests, TestNotEnoughRequests and
TestStorageRequests cases (noderesources/fit_test.go), on upstream's node of 10m cpu, 20
bytes of memory, 32 pods, 5 example.com/aaa, 20 ephemeral-storage and 5 hugepages-2Mi."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, Code, NodeInfo, Status
from dra_operator.controllers.scheduler.plugins.noderesources import fit
from dra_operator.model import ExtendedResourceClasses, FrozenMap, Pod

from .builders import FakeHandle, make_node, make_pod, node_info, state

Raw = dict[str, Any]
A, B = "example.com/aaa", "example.com/bbb"
K8S_A, K8S_B = "kubernetes.io/something", "subdomain.kubernetes.io/something"
HUGE = "hugepages-2Mi"
DRA = "extended.resource.dra.io/something"


def r(cpu: int = 0, mem: int = 0, eph: int = 0, **scalars: int) -> dict[str, str]:
    """One container's requests as upstream's `framework.Resource` (cpu in millicores)."""
    requests = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}
    names = {"a": A, "b": B, "k8s_a": K8S_A, "k8s_b": K8S_B, "huge": HUGE, "dra": DRA}
    requests.update({names[k]: str(v) for k, v in scalars.items()})
    return requests


def pod(
    *containers: dict[str, str],
    init: tuple[dict[str, str], ...] = (),
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
) -> Pod:
    spec: Raw = {
        "initContainers": [
            {"name": f"i{i}", "resources": {"requests": c}} for i, c in enumerate(init)
        ]
    }
    if overhead:
        spec["overhead"] = overhead
    if pod_level:
        spec["resources"] = {"requests": pod_level}
    return make_pod(
        containers=[
            {"name": f"c{i}", "resources": {"requests": c}} for i, c in enumerate(containers)
        ],
        **spec,
    )


def node_with(*existing: Pod, pods: str = "32") -> NodeInfo:
    allocatable = {
        "cpu": "10m",
        "memory": "20",
        "pods": pods,
        A: "5",
        "ephemeral-storage": "20",
        HUGE: "5",
    }
    return node_info(make_node(allocatable=allocatable), existing)


def unsched(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, "NodeResourcesFit")


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, "NodeResourcesFit")


def insufficient(name: str) -> str:
    return f"Insufficient {name}"


CPU, MEM = insufficient("cpu"), insufficient("memory")

ENOUGH = [
    pytest.param(
        make_pod(containers=[]),
        node_with(pod(r(10, 20))),
        {},
        False,
        SUCCESS,
        id="no resources requested always fits",
    ),
    pytest.param(
        pod(r(1, 1)),
        node_with(pod(r(10, 20))),
        {},
        False,
        unsched(CPU, MEM),
        id="too many resources fails",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(3, 1),)),
        node_with(pod(r(8, 19))),
        {},
        False,
        unsched(CPU),
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(3, 1), r(2, 1))),
        node_with(pod(r(8, 19))),
        {},
        False,
        unsched(CPU),
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(1, 3),)),
        node_with(pod(r(9, 19))),
        {},
        False,
        unsched(MEM),
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(1, 3), r(1, 2))),
        node_with(pod(r(9, 19))),
        {},
        False,
        unsched(MEM),
        id="too many resources fails due to highest init container memory",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(1, 1),)),
        node_with(pod(r(9, 19))),
        {},
        False,
        SUCCESS,
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(1, 1), r(1, 1))),
        node_with(pod(r(9, 19))),
        {},
        False,
        SUCCESS,
        id="multiple init containers fit because it's the max, not sum, of"
        " containers and init containers",
    ),
    pytest.param(
        pod(r(1, 1)), node_with(pod(r(5, 5))), {}, False, SUCCESS, id="both resources fit"
    ),
    pytest.param(
        pod(r(2, 1)),
        node_with(pod(r(9, 5))),
        {},
        False,
        unsched(CPU),
        id="one resource memory fits",
    ),
    pytest.param(
        pod(r(1, 2)), node_with(pod(r(5, 19))), {}, False, unsched(MEM), id="one resource cpu fits"
    ),
    pytest.param(pod(r(5, 1)), node_with(pod(r(5, 19))), {}, False, SUCCESS, id="equal edge case"),
    pytest.param(
        pod(r(4, 1), init=(r(5, 1),)),
        node_with(pod(r(5, 19))),
        {},
        False,
        SUCCESS,
        id="equal edge case for init container",
    ),
    pytest.param(pod(r(a=1)), node_with(pod(r())), {}, False, SUCCESS, id="extended resource fits"),
    pytest.param(
        pod(r(), init=(r(a=1),)),
        node_with(pod(r())),
        {},
        False,
        SUCCESS,
        id="extended resource fits for init container",
    ),
    pytest.param(
        pod(r(1, 1, a=10)),
        node_with(pod(r(a=0))),
        {},
        False,
        unresolvable(insufficient(A)),
        id="extended resource capacity enforced",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, a=10),)),
        node_with(pod(r(a=0))),
        {},
        False,
        unresolvable(insufficient(A)),
        id="extended resource capacity enforced for init container",
    ),
    pytest.param(
        pod(r(1, 1, a=1)),
        node_with(pod(r(a=5))),
        {},
        False,
        unsched(insufficient(A)),
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, a=1),)),
        node_with(pod(r(a=5))),
        {},
        False,
        unsched(insufficient(A)),
        id="extended resource allocatable enforced for init container",
    ),
    pytest.param(
        pod(r(1, 1, a=3), r(1, 1, a=3)),
        node_with(pod(r(a=2))),
        {},
        False,
        unresolvable(insufficient(A)),
        id="extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, a=3), r(1, 1, a=3))),
        node_with(pod(r(a=2))),
        {},
        False,
        SUCCESS,
        id="extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, a=6), r(1, 1, a=3))),
        node_with(pod(r(a=2))),
        {},
        False,
        unresolvable(insufficient(A)),
        id="extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        pod(r(1, 1, b=1)),
        node_with(pod(r())),
        {},
        False,
        unresolvable(insufficient(B)),
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, b=1),)),
        node_with(pod(r())),
        {},
        False,
        unresolvable(insufficient(B)),
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    pytest.param(
        pod(r(1, 1, k8s_a=10)),
        node_with(pod(r())),
        {},
        False,
        unresolvable(insufficient(K8S_A)),
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, k8s_b=10),)),
        node_with(pod(r())),
        {},
        False,
        unresolvable(insufficient(K8S_B)),
        id="kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        pod(r(1, 1, huge=10)),
        node_with(pod(r(huge=0))),
        {},
        False,
        unresolvable(insufficient(HUGE)),
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        pod(r(), init=(r(1, 1, huge=10),)),
        node_with(pod(r(huge=0))),
        {},
        False,
        unresolvable(insufficient(HUGE)),
        id="hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        pod(r(1, 1, huge=3), r(1, 1, huge=3)),
        node_with(pod(r(huge=2))),
        {},
        False,
        unresolvable(insufficient(HUGE)),
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        pod(r(1, 1, b=1)),
        node_with(pod(r())),
        {"ignoredResources": [B]},
        False,
        SUCCESS,
        id="skip checking ignored extended resource",
    ),
    pytest.param(
        pod(r(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        node_with(pod(r(5, 5))),
        {},
        False,
        SUCCESS,
        id="resources + pod overhead fits",
    ),
    pytest.param(
        pod(r(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        node_with(pod(r(5, 5))),
        {},
        False,
        unsched(MEM),
        id="requests + overhead does not fit for memory",
    ),
    pytest.param(
        pod(r(1, 1, b=1, k8s_a=1)),
        node_with(pod(r())),
        {"ignoredResourceGroups": ["example.com"]},
        False,
        unresolvable(insufficient(K8S_A)),
        id="skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        pod(r(1, 1, a=0)),
        node_with(pod(r(a=6))),
        {},
        False,
        SUCCESS,
        id="skip checking extended resource request with quantity zero via resource groups",
    ),
    pytest.param(
        pod(r(a=1)),
        node_with(pod(r(20, 30, a=1))),
        {},
        False,
        SUCCESS,
        id="skip checking resource request with quantity zero",
    ),
    pytest.param(
        pod(r(1, 1), pod_level={"cpu": "1m", "memory": "2"}),
        node_with(pod(r(5, 5))),
        {},
        False,
        SUCCESS,
        id="both pod-level and container-level resources fit",
    ),
    pytest.param(
        pod(r(1, 1), pod_level={"cpu": "7m", "memory": "2"}),
        node_with(pod(r(5, 5))),
        {},
        False,
        unsched(CPU),
        id="pod-level cpu resource not fit",
    ),
    pytest.param(
        pod(r(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
        node_with(pod(r(5, 19))),
        {},
        False,
        unsched(MEM),
        id="pod-level memory resource not fit",
    ),
    pytest.param(
        make_pod(containers=[], resources={"requests": {"cpu": "3m", "memory": "2", HUGE: "5"}}),
        node_with(),
        {},
        False,
        SUCCESS,
        id="pod-level hugepages resource fit",
    ),
    pytest.param(
        pod(r(1, 1, huge=3), pod_level={"cpu": "3m", "memory": "2", HUGE: "5"}),
        node_with(),
        {},
        False,
        SUCCESS,
        id="both pod-level and container-level hugepages resource fit",
    ),
    pytest.param(
        make_pod(containers=[], resources={"requests": {"cpu": "3m", "memory": "2", HUGE: "10"}}),
        node_with(),
        {},
        False,
        unresolvable(insufficient(HUGE)),
        id="pod-level hugepages resource not fit",
    ),
    pytest.param(
        pod(r(1, 1), init=(r(1, 1),), pod_level={"cpu": "3m", "memory": "2"}),
        node_with(pod(r(5, 19))),
        {},
        False,
        unsched(MEM),
        id="one pod-level cpu resource fits and all init and non-init containers resources fit",
    ),
    pytest.param(
        pod(r(a=1)),
        node_with(pod(r())),
        {},
        True,
        SUCCESS,
        id="extended resource backed by device plugin",
    ),
    pytest.param(
        pod(r(1, 1, dra=1)),
        node_with(pod(r())),
        {},
        True,
        SUCCESS,
        id="extended resource backed by DRA",
    ),
    pytest.param(
        pod(r(1, 1, a=1)),
        node_with(pod(r())),
        {},
        False,
        SUCCESS,
        id="extended resource backed by DRA, nil draManager",
    ),
    pytest.param(
        pod(r(1, 1, dra=1)),
        node_with(pod(r())),
        {},
        False,
        unresolvable(insufficient(DRA)),
        id="extended resource backed by DRA not enabled",
    ),
    pytest.param(
        pod(r(1, 1, b=1)),
        node_with(pod(r())),
        {},
        True,
        unresolvable(insufficient(B)),
        id="extended resource NOT backed by DRA",
    ),
    pytest.param(
        pod(r(dra=1)),
        node_with(pod(r(dra=0))),
        {},
        True,
        SUCCESS,
        id="extended resource was backed by Device Plugin (Allocatable: 0)",
    ),
    pytest.param(
        pod(r(a=1)),
        node_with(pod(r(a=0))),
        {},
        True,
        SUCCESS,
        id="extended resource was backed by Device Plugin (Allocatable: 0), global cache",
    ),
]


class DRAHandle(FakeHandle):
    """A handle knowing the DeviceClass that serves `extended.resource.dra.io/something`."""

    @property
    def extended_resource_classes(self) -> ExtendedResourceClasses:
        return ExtendedResourceClasses(FrozenMap({DRA: "device-class-name"}))


@pytest.mark.parametrize(("incoming", "node", "args", "dra", "want"), ENOUGH)
def test_enough_requests(incoming: Pod, node: NodeInfo, args: Raw, dra: bool, want: Status) -> None:
    plugin = fit.new(args, DRAHandle() if dra else FakeHandle())
    cycle = state()
    assert plugin.pre_filter(cycle, incoming, []) == (None, SUCCESS)
    assert plugin.filter(cycle, incoming, node) == want


def test_pre_filter_disabled() -> None:
    plugin = fit.new({}, FakeHandle())
    assert plugin.filter(state(), make_pod(), node_with()).code is Code.ERROR


TOO_MANY = unsched("Too many pods")


@pytest.mark.parametrize(
    ("incoming", "existing"),
    [
        pytest.param(
            make_pod(containers=[]),
            pod(r(10, 20)),
            id="even without specified resources, predicate fails when there's no space"
            " for additional pod",
        ),
        pytest.param(
            pod(r(1, 1)),
            pod(r(5, 5)),
            id="even if both resources fit, predicate fails when there's no space for"
            " additional pod",
        ),
        pytest.param(
            pod(r(5, 1)),
            pod(r(5, 19)),
            id="even for equal edge case, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            pod(r(5, 1), init=(r(5, 1),)),
            pod(r(5, 19)),
            id="even for equal edge case, predicate fails when there's no space for"
            " additional pod due to init container",
        ),
    ],
)
def test_not_enough_requests(incoming: Pod, existing: Pod) -> None:
    plugin = fit.new({}, FakeHandle())
    node = node_info(make_node(allocatable={"cpu": "10m", "memory": "20", "pods": "1"}), [existing])
    cycle = state()
    plugin.pre_filter(cycle, incoming, [])
    assert plugin.filter(cycle, incoming, node) == TOO_MANY


@pytest.mark.parametrize(
    ("incoming", "existing", "want"),
    [
        pytest.param(
            pod(r(1, 1)), pod(r(2, 10)), SUCCESS, id="empty storage requested, and pod fits"
        ),
        pytest.param(
            pod(r(eph=25)),
            pod(r(2, 2)),
            unresolvable(insufficient("ephemeral-storage")),
            id="storage ephemeral local storage request exceeds allocatable",
        ),
        pytest.param(
            pod(r(eph=5)), pod(r(2, 2, eph=10)), SUCCESS, id="ephemeral local storage is sufficient"
        ),
        pytest.param(pod(r(eph=10)), pod(r(2, 2)), SUCCESS, id="pod fits"),
    ],
)
def test_storage_requests(incoming: Pod, existing: Pod, want: Status) -> None:
    plugin = fit.new({}, FakeHandle())
    cycle = state()
    plugin.pre_filter(cycle, incoming, [])
    assert plugin.filter(cycle, incoming, node_with(existing)) == want


def sidecar_pod(main_cpu: str | None, sidecar_cpu: str | None) -> Pod:
    main: Raw = {"name": "regular"}
    if main_cpu:
        main["resources"] = {"requests": {"cpu": main_cpu}}
    sidecar: Raw = {"name": "restartable-init", "restartPolicy": "Always"}
    if sidecar_cpu:
        sidecar["resources"] = {"requests": {"cpu": sidecar_cpu}}
    return make_pod(containers=[main], initContainers=[sidecar])


@pytest.mark.parametrize(
    ("incoming", "want"),
    [
        pytest.param(
            make_pod(containers=[{"name": "regular"}]),
            SUCCESS,
            id="allow pod without restartable init containers",
        ),
        pytest.param(
            sidecar_pod(None, None), SUCCESS, id="allow pod with restartable init containers"
        ),
        pytest.param(
            sidecar_pod("1m", "1m"),
            SUCCESS,
            id="allow pod if the total requested resources do not exceed the node's"
            " allocatable resources",
        ),
        pytest.param(
            sidecar_pod("1m", "2m"),
            unresolvable(CPU),
            id="not allow pod if the total requested resources do exceed the node's"
            " allocatable resources",
        ),
    ],
)
def test_restartable_init_containers(incoming: Pod, want: Status) -> None:
    plugin = fit.new({}, FakeHandle())
    node = node_info(make_node(allocatable={"cpu": "2m", "memory": "0", "pods": "1"}))
    cycle = state()
    assert plugin.pre_filter(cycle, incoming, []) == (None, SUCCESS)
    assert plugin.filter(cycle, incoming, node) == want


def test_pods_alike_in_requests_sign_alike_and_extended_requests_do_not_sign() -> None:
    plugin = fit.new({}, FakeHandle())
    one = plugin.sign_pod(pod(r(cpu=100, mem=10)))
    assert one is not None
    assert plugin.sign_pod(pod(r(cpu=100, mem=10))) == one
    split = pod(r(cpu=50, mem=10), {"cpu": "50m"})  # the same requests, scored apart
    assert plugin.sign_pod(split) != one
    assert plugin.sign_pod(pod(r(cpu=200, mem=10))) != one
    assert plugin.sign_pod(pod(r(cpu=100, dra=1))) is None
    assert plugin.sign_pod(pod(r(cpu=100, a=1))) is None
