"""NodePorts, upstream's TestNodePorts and TestPreFilterDisabled cases."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import SKIP, SUCCESS, Code, Status, host_ports
from dra_operator.controllers.scheduler.plugins import nodeports
from dra_operator.model import Pod

from .builders import FakeHandle, container, make_node, make_pod, node_info, state

Raw = dict[str, Any]
REJECT = Status(
    Code.UNSCHEDULABLE,
    ("node(s) didn't have free ports for the requested pod ports",),
    "NodePorts",
)


def ports(*infos: str) -> list[Raw]:
    """ "PROTO/IP/PORT" as upstream's test helper writes them."""
    result = []
    for info in infos:
        protocol, ip, port = info.split("/")
        result.append(
            {"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": protocol}
        )
    return result


def pod_with(*infos: str) -> Pod:
    return make_pod(containers=[container(ports=ports(*infos))])


def init_pod(*, sidecar: bool) -> Pod:
    init: Raw = container(
        "init", ports=[{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]
    )
    if sidecar:
        init["restartPolicy"] = "Always"
    return make_pod(containers=[container()], initContainers=[init])


CASES = [
    pytest.param(make_pod(), [], SKIP, None, id="skip filter"),
    pytest.param(
        pod_with("UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], SUCCESS, SUCCESS, id="other port"
    ),
    pytest.param(
        pod_with("UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], SUCCESS, REJECT, id="same udp port"
    ),
    pytest.param(
        pod_with("TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], SUCCESS, REJECT, id="same tcp port"
    ),
    pytest.param(
        pod_with("TCP/127.0.0.1/8080"),
        ["TCP/127.0.0.2/8080"],
        SUCCESS,
        SUCCESS,
        id="different host ip",
    ),
    pytest.param(
        pod_with("UDP/127.0.0.1/8080"),
        ["TCP/127.0.0.1/8080"],
        SUCCESS,
        SUCCESS,
        id="different protocol",
    ),
    pytest.param(
        pod_with("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        ["UDP/127.0.0.1/8080"],
        SUCCESS,
        REJECT,
        id="second udp port conflict",
    ),
    pytest.param(
        pod_with("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        SUCCESS,
        REJECT,
        id="first tcp port conflict",
    ),
    pytest.param(
        pod_with("TCP/0.0.0.0/8001"),
        ["TCP/127.0.0.1/8001"],
        SUCCESS,
        REJECT,
        id="first tcp port conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ["TCP/127.0.0.1/8001"],
        SUCCESS,
        REJECT,
        id="TCP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with("TCP/127.0.0.1/8001"),
        ["TCP/0.0.0.0/8001"],
        SUCCESS,
        REJECT,
        id="second tcp port conflict to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with("UDP/127.0.0.1/8001"),
        ["TCP/0.0.0.0/8001"],
        SUCCESS,
        SUCCESS,
        id="second different protocol",
    ),
    pytest.param(
        pod_with("UDP/127.0.0.1/8001"),
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        SUCCESS,
        REJECT,
        id="UDP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        init_pod(sidecar=False),
        ["TCP/0.0.0.0/8001"],
        SKIP,
        None,
        id="non-sidecar initContainer using hostPort",
    ),
    pytest.param(
        init_pod(sidecar=True),
        ["TCP/0.0.0.0/8001"],
        SUCCESS,
        REJECT,
        id="TCP hostPort conflict from sidecar initContainer",
    ),
]


@pytest.mark.parametrize(("pod", "used", "want_pre_filter", "want_filter"), CASES)
def test_node_ports(
    pod: Pod, used: list[str], want_pre_filter: Status, want_filter: Status | None
) -> None:
    plugin = nodeports.new({}, FakeHandle())
    cycle = state()
    assert plugin.pre_filter(cycle, pod, []) == (None, want_pre_filter)
    if want_filter is None:
        return
    existing = [pod_with(*used)] if used else []
    assert plugin.filter(cycle, pod, node_info(make_node(), existing)) == want_filter


def test_pre_filter_disabled() -> None:
    plugin = nodeports.new({}, FakeHandle())
    status = plugin.filter(state(), make_pod(), node_info(make_node()))
    assert status.code is Code.ERROR


def test_an_empty_host_ip_binds_every_address() -> None:
    plugin = nodeports.new({}, FakeHandle())
    pod = make_pod(containers=[container(ports=[{"containerPort": 80, "hostPort": 80}])])
    cycle = state()
    plugin.pre_filter(cycle, pod, [])
    assert (
        plugin.filter(cycle, pod, node_info(make_node(), [pod_with("TCP/10.0.0.1/80")])) == REJECT
    )


@pytest.mark.parametrize(
    ("wanted", "used", "expect"),
    [
        pytest.param(
            ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/9090"], True, id="non-conflicting ports"
        ),
        pytest.param(
            ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
            ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"],
            True,
            id="multiple non-conflicting ports",
        ),
        pytest.param(
            ["TCP/127.0.0.1/80"], ["UDP/127.0.0.1/80"], True, id="same ports on different protocols"
        ),
        pytest.param(["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/80"], False, id="conflicting ports"),
        pytest.param(
            ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
            ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"],
            False,
            id="multiple ports, some conflicting",
        ),
    ],
)
def test_fits(wanted: list[str], used: list[str], expect: bool) -> None:
    node = node_info(make_node(), [pod_with(*used)])
    assert nodeports.fits(host_ports(pod_with(*wanted)), node) is expect
