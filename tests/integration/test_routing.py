"""Every pod that needs a device is placed by dra-operator beside kube-scheduler (issue 27).

On a control plane of its own that runs kube-scheduler and kube-controller-manager
leader-elected, as kind does, with the routing of the default install (the admission policies
and the parameters ConfigMap of the layout of deploy/ for the release, e2e/kind/install.sh's
choice) and `dra-operator run` (default flags, deploy/'s RBAC) as a subprocess:

* the race (`_routing_race`): claim pods, explicit and implicit extended-resource pods and
  PodGroup pods, half naming kube-scheduler, for fewer devices than pods: no device in two
  claims, `verify` clean, every bound pod placed by dra-operator, every device used;
  `RACES` races (3; 20 with ROUTING_FULL=1, `make test-routing`);
* a pod that turns DRA-backed later (its DeviceClass gets `extendedResourceName` after the
  pod exists, on kube-scheduler) is reported: a Warning Event on the pod, the log line and the
  `device-pods-not-routed` gauge; a new pod asking the same is routed;
* the parameters ConfigMap, deleted, is written again by the operator;
* the chart's default (`routing.mode: auto`, rendered against the server) installs the same
  admission policies and bindings as the layout, here and on each release below;
* with ROUTING_RELEASES naming releases (`make test-routing`: "1.34 1.35 1.36 1.37"), the race
  on each of them with its install: 1.34 and 1.35 with the refusing policies alone (pods
  naming kube-scheduler are refused) and with MutatingAdmissionPolicy v1beta1 switched on
  (deploy/release-1.34), 1.36 and 1.37 with deploy/. Their kube-scheduler and
  kube-controller-manager come from e2e/controlplane/build.sh (`make test-routing` builds the
  missing ones).

With ROUTING_FIGURES naming a file, each race appends one JSON line there (release, layout,
the `Race`'s counts) for docs/coexistence.md's table.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration._routing_plane import (
    BETA_GATES,
    Plane,
    chart_routing,
    layout_manifests,
    leading,
    races,
    routed_plane,
    routing_of,
)
from tests.integration._routing_race import (
    CONFIG_MAPS,
    DEVICES,
    PARAMS_NAMESPACE,
    published,
)
from tests.support.operator import wait_for

from dra_operator import names
from dra_operator.kube import CORE_EVENTS, NAMESPACES, PODS, Client, dra

pytestmark = pytest.mark.controlplane

RACES = 20 if os.environ.get("ROUTING_FULL") == "1" else 3
UNROUTED_SAMPLE = 'dra_operator_unsafe_configuration{reason="device-pods-not-routed"}'


@pytest.fixture(scope="module")
def default_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    with routed_plane(tmp_path_factory.mktemp("routing")) as plane:
        yield plane


@pytest.fixture
async def api(default_plane: Plane) -> AsyncIterator[Client]:
    async with Client.from_kubeconfig(default_plane.state.admin_kubeconfig) as client:
        await leading(client, default_plane)
        yield client


@pytest.mark.timeout(1800)
async def test_every_pod_that_needs_a_device_is_routed_beside_kube_scheduler(
    default_plane: Plane, api: Client
) -> None:
    assert default_plane.layout == "", "the session release should take deploy/ itself"
    results = await races(api, default_plane, RACES)

    assert all(r.used == DEVICES and r.refused == 0 for r in results), results
    kinds = set(results[0].kinds)
    assert {"claims", "explicit-extended-resource", "implicit-extended-resource"} <= kinds
    assert default_plane.events("allocation.foreign") == []
    assert default_plane.events("routing.unrouted_pod") == []


def test_the_charts_auto_mode_installs_the_routing_of_deploy(
    default_plane: Plane, tmp_path: Path
) -> None:
    assert chart_routing(default_plane, tmp_path) == routing_of(layout_manifests(""))


@pytest.mark.timeout(600)
async def test_a_pod_that_turns_dra_backed_later_is_reported(
    default_plane: Plane, api: Client
) -> None:
    suffix = uuid.uuid4().hex[:6]
    ns, name = f"late-{suffix}", f"late-{suffix}.example.com/gpu"
    await api.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    early = await api.create(PODS, _asking("early", name), namespace=ns)
    assert early["spec"]["schedulerName"] == "default-scheduler"  # nothing maps it yet

    await api.create(dra("deviceclasses"), _class(f"late-{suffix}", name))
    assert await published(api, name)

    async def reported() -> list[dict[str, Any]]:
        found = await api.list(CORE_EVENTS, namespace=ns)
        return [e for e in found.get("items") or () if e["reason"] == "NotRoutedToDRAOperator"]

    (event, *_) = await wait_for(reported, what="the NotRoutedToDRAOperator Event")
    assert event["type"] == "Warning" and event["involvedObject"]["name"] == "early"
    assert name in event["message"]
    (line, *_) = default_plane.events("routing.unrouted_pod")
    assert line["pod"] == f"{ns}/early" and line["resources"] == [name]
    assert f"{UNROUTED_SAMPLE} 1.0" in default_plane.metrics()

    late = await api.create(PODS, _asking("late", name), namespace=ns)
    assert late["spec"]["schedulerName"] == names.DEFAULT_SCHEDULER_NAME

    await api.delete(PODS, "early", namespace=ns, grace_period_seconds=0)
    await wait_for(
        lambda: f"{UNROUTED_SAMPLE} 0.0" in default_plane.metrics(),
        what="the gauge to clear once the pod is gone",
    )


@pytest.mark.timeout(600)
async def test_the_parameters_are_written_again_when_deleted(api: Client) -> None:
    name = f"back-{uuid.uuid4().hex[:6]}.example.com/gpu"
    await api.create(dra("deviceclasses"), _class(name.split(".")[0], name))
    assert await published(api, name)

    await api.delete(CONFIG_MAPS, names.EXTENDED_RESOURCES_PARAMS, namespace=PARAMS_NAMESPACE)

    assert await published(api, name, timeout=60)


RELEASES = os.environ.get("ROUTING_RELEASES", "").split()


def _on(release: str, args: tuple[str, ...], layout: str, name: str) -> Any:
    skip = pytest.mark.skipif(
        release not in RELEASES, reason=f"ROUTING_RELEASES does not name {release}"
    )
    return pytest.param(release, args, layout, id=name, marks=skip)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    ("release", "apiserver_args", "layout"),
    [
        _on("1.34", (), "require-scheduler-only", "1.34"),
        _on("1.34", BETA_GATES, "release-1.34", "1.34-mutating-policies-on"),
        _on("1.35", (), "require-scheduler-only", "1.35"),
        _on("1.35", BETA_GATES, "release-1.34", "1.35-mutating-policies-on"),
        _on("1.36", (), "", "1.36"),
        _on("1.37", (), "", "1.37"),
    ],
)
async def test_the_install_of_each_release_routes_or_refuses(
    tmp_path: Path, release: str, apiserver_args: tuple[str, ...], layout: str
) -> None:
    with routed_plane(tmp_path, release, apiserver_args) as plane:
        assert plane.layout == layout
        assert chart_routing(plane, tmp_path / "helm") == routing_of(layout_manifests(layout))
        async with Client.from_kubeconfig(plane.state.admin_kubeconfig) as api:
            await leading(api, plane)
            results = await races(api, plane, RACES)

    routed = layout != "require-scheduler-only"
    for result in results:
        # Without MutatingAdmissionPolicy every pod naming kube-scheduler is refused.
        assert (result.refused == 0) is routed, result
    assert plane.events("allocation.foreign") == []


def _asking(name: str, resource: str) -> dict[str, Any]:
    amounts = {resource: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "c", "image": "x", "resources": {"requests": amounts, "limits": amounts}}
            ]
        },
    }


def _class(name: str, extended: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"extendedResourceName": extended},
    }
