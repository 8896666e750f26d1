"""Scenario 4: throttling. An API server that answers most of the operator's calls with 429.

The module's control plane runs with one read and one write in flight at most
(`--max-requests-inflight=1 --max-mutating-requests-inflight=1`) under the plain in-flight
limit (`--enable-priority-and-fairness=false`: API Priority and Fairness would queue rather
than reject): every request of the operator beyond those gets 429 Too Many Requests at once,
while the test's `admin` (system:masters, never limited) keeps creating pods. The operator
must back off and finish the burst. Reported: how many requests the server answered with 429
(`apiserver_request_total{code="429"}`) and how many of the operator's writes were retried.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator

import pytest
from tests.chaos.conftest import Operators
from tests.chaos.harness import Burst, record, scale
from tests.support.controlplane import running_control_plane

from dra_operator import controlplane
from dra_operator.kube import Client

pytestmark = pytest.mark.controlplane

_REQUESTS = "apiserver_request_total{"


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[controlplane.ControlPlaneState]:
    args = [
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight=1",
        "--max-mutating-requests-inflight=1",
    ]
    with running_control_plane(tmp_path_factory.mktemp("throttled"), args) as state:
        yield state


def rejected(plane: controlplane.ControlPlaneState) -> int:
    """Requests the apiserver has answered with 429 so far."""
    kubectl = controlplane.find_binaries().path("kubectl")
    text = subprocess.run(
        [str(kubectl), f"--kubeconfig={plane.admin_kubeconfig}", "get", "--raw", "/metrics"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines = (
        line for line in text.splitlines() if line.startswith(_REQUESTS) and 'code="429"' in line
    )
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in lines)


async def test_throttled_operator_backs_off_and_finishes(
    plane: controlplane.ControlPlaneState,
    admin: Client,
    operators: Operators,
    record_property: Callable[[str, object], None],
) -> None:
    pods = scale(40, 200)
    burst = await Burst.prepare(admin, nodes=4, devices_per_node=pods // 4)
    before = rejected(plane)
    operator = operators(plane.operator_kubeconfig, burst.namespace)
    operator.start("chaos")
    await burst.create(0, pods)
    figures = await burst.check(plane)
    throttled = rejected(plane) - before
    assert throttled > 0, "the server never throttled: the scenario tested nothing"
    record(
        record_property,
        "throttling",
        runs=1,
        faults=throttled,
        operator_write_retries=operator.output().count('"write.retried"'),
        **figures,
    )
