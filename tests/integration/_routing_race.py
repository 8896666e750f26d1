"""One race of every kind of pod that needs a device, beside kube-scheduler (issue 27).

Per race, in a fresh namespace: two Ready nodes with two devices each of a driver no other race
uses, and a DeviceClass for it whose `extendedResourceName` is `<driver>/gpu`. Once the
operator has published that name for the policies (the ConfigMap of the routing bindings),
all at once, for each of `default-scheduler` and `dra-operator`: a pod with a one-device claim
template, a pod asking for one `<driver>/gpu` (explicit extended resource), a pod asking for one
`deviceclass.resource.kubernetes.io/<class>` (implicit), and, where the server keeps
`spec.schedulingGroup`, a pod of a PodGroup with a claim: more pods than devices. Pods the
policies refuse (a release without MutatingAdmissionPolicy) are counted, not created. The race
waits until nothing moves, then counts devices in two claims, `verify` violations, and pods
placed by a scheduler other than dra-operator; then deletes what it made.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import time
import uuid
from collections.abc import Mapping
from typing import Any

from bench.coexistence import delete_scene

from dra_operator import controlplane, names, verify
from dra_operator.errors import APIError, APIForbiddenError
from dra_operator.kube import NAMESPACES, PODS, Client, Resource, dra

SCHEDULERS = ("default-scheduler", names.DEFAULT_SCHEDULER_NAME)
PARAMS_NAMESPACE = "dra-operator-system"
CONFIG_MAPS = Resource("", "v1", "configmaps", namespaced=True)
DEVICES = 4
_STABLE_POLLS = 6
_QUIET_POLLS = 30
"""Polls without any change after which pods that still wait are taken to wait for good (a
release whose operator serves no extended resources, pods the policies refused)."""
_POLL = 0.5


@dataclasses.dataclass(frozen=True, slots=True)
class Race:
    """What one race left: `overallocated` devices in two claims, `violations` of `verify`,
    `foreign` pods another scheduler placed, `refused` pod creations, `bound` pods, `used`
    distinct devices allocated, `kinds` of pods created."""

    run: int
    settled: bool
    overallocated: int
    violations: tuple[str, ...]
    foreign: tuple[str, ...]
    refused: int
    bound: int
    used: int
    kinds: tuple[str, ...]

    @property
    def safe(self) -> bool:
        return self.settled and not (self.overallocated or self.violations or self.foreign)


async def race(api: Client, run: int, *, settle_timeout: float = 120.0) -> Race:
    scene = _Scene(run)
    try:
        refused, kinds = await scene.create(api)
        settled = await scene.wait_settled(api, settle_timeout)
        return await scene.measure(api, run, settled, refused, kinds)
    finally:
        await scene.delete(api)


async def published(api: Client, name: str, timeout: float = 30.0) -> bool:
    """Whether the routing parameters list `name` within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(APIError):
            found = await api.get(
                CONFIG_MAPS, names.EXTENDED_RESOURCES_PARAMS, namespace=PARAMS_NAMESPACE
            )
            if name in ((found.get("data") or {}).get("names") or "").split(" "):
                return True
        await asyncio.sleep(0.2)
    return False


@dataclasses.dataclass(frozen=True, slots=True)
class Arrivals:
    """What claim pods arriving one by one left: `created` pods, `bound` of them seen bound
    (more than the devices: they were allocated again), `unrouted` pods that named
    kube-scheduler and kept it, `refused` creations, `overallocated` the most devices seen in
    two claims at one reading, `foreign` pods seen bound by another scheduler, and the end
    state once settled (`settled`, `violations` of `verify`)."""

    created: int
    bound: int
    unrouted: tuple[str, ...]
    refused: int
    overallocated: int
    foreign: tuple[str, ...]
    settled: bool
    violations: tuple[str, ...]

    @property
    def safe(self) -> bool:
        return self.settled and not (
            self.unrouted or self.overallocated or self.foreign or self.violations
        )


class Arriving:
    """Claim pods (the kind every routing layout so far sends to dra-operator) created one at a
    time, alternately naming each scheduler, while something else changes the cluster (an
    upgrade). A pod seen bound is deleted, so the devices are allocated again and again and
    either scheduler could take them in any window the change opens."""

    def __init__(self, api: Client, pace: float = 0.3) -> None:
        self.api = api
        self.pace = pace
        self.scene = _Scene("arrive")
        self.created = 0
        self._unrouted: list[str] = []
        self._refused = 0
        self._overallocated = 0
        self._foreign: set[str] = set()
        self._bound: set[str] = set()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.scene.set_up(self.api)
        self._task = asyncio.create_task(self._arrive())

    async def until(self, count: int, timeout: float = 300.0) -> None:
        """Until `count` pods were created in all (the creator failing raises here)."""
        deadline = time.monotonic() + timeout
        while self.created < count:
            assert self._task is not None and time.monotonic() < deadline, self.created
            if self._task.done():
                self._task.result()
            await asyncio.sleep(_POLL)

    async def finish(self) -> Arrivals:
        """Stop creating, let the last pods settle (bound ones stay), read, then delete all."""
        assert self._task is not None
        self._stop.set()
        try:
            await self._task
            settled = await self.scene.wait_settled(self.api, 120.0)
            await self._observe(delete_bound=False)
            end = await self.scene.measure(self.api, 0, settled, 0, ())
        finally:
            await self.scene.delete(self.api)
        return Arrivals(
            created=self.created,
            bound=len(self._bound),
            unrouted=tuple(self._unrouted),
            refused=self._refused,
            overallocated=max(self._overallocated, end.overallocated),
            foreign=tuple(sorted(self._foreign | set(end.foreign))),
            settled=end.settled,
            violations=end.violations,
        )

    async def _arrive(self) -> None:
        while not self._stop.is_set():
            scheduler = SCHEDULERS[self.created % len(SCHEDULERS)]
            name = f"arrive-{self.created}"
            try:
                answer = await self.api.create(
                    PODS, _pod(name, scheduler, template="one"), namespace=self.scene.namespace
                )
            except APIForbiddenError:
                self._refused += 1
            else:
                if answer["spec"].get("schedulerName") != SCHEDULERS[1]:
                    self._unrouted.append(name)
            self.created += 1
            await self._observe(delete_bound=True)
            await asyncio.sleep(self.pace)

    async def _observe(self, *, delete_bound: bool) -> None:
        pods, claims = await self.scene._read(self.api)
        users = _device_users(claims)
        self._overallocated = max(
            self._overallocated, sum(1 for owners in users.values() if len(owners) > 1)
        )
        bound = [p for p in pods if p["spec"].get("nodeName")]
        self._bound |= {p["metadata"]["name"] for p in bound}
        self._foreign |= {
            p["metadata"]["name"] for p in bound if p["spec"].get("schedulerName") != SCHEDULERS[1]
        }
        if delete_bound:
            for pod in bound:
                with contextlib.suppress(APIError):
                    await self.api.delete(
                        PODS,
                        pod["metadata"]["name"],
                        namespace=self.scene.namespace,
                        grace_period_seconds=0,
                    )


class _Scene:
    def __init__(self, run: int | str) -> None:
        suffix = uuid.uuid4().hex[:6]
        self.namespace = f"route-{run}-{suffix}"
        self.driver = f"route-{run}-{suffix}.example.com"
        self.device_class = f"route-{run}-{suffix}"
        self.explicit = f"{self.driver}/gpu"
        self.implicit = f"deviceclass.resource.kubernetes.io/{self.device_class}"
        self.nodes = [f"route-{run}-{suffix}-{i}" for i in range(2)]

    async def set_up(self, api: Client) -> None:
        """The namespace, the nodes with their devices, the class and the one-device template."""
        ns = self.namespace
        await api.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        for node in self.nodes:
            await controlplane.create_ready_node(api, node)
            await api.create(dra("resourceslices"), self._slice(node))
        await api.create(dra("deviceclasses"), self._class())
        request = {"name": "gpu", "exactly": {"deviceClassName": self.device_class}}
        await api.create(
            dra("resourceclaimtemplates"),
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one", "namespace": ns},
                "spec": {"spec": {"devices": {"requests": [request]}}},
            },
        )

    async def create(self, api: Client) -> tuple[int, tuple[str, ...]]:
        """The scene, then every pod at once: (pods refused, kinds of pods created)."""
        await self.set_up(api)
        assert await published(api, self.explicit), f"{self.explicit} never published"
        pods = []
        for index, scheduler in enumerate(SCHEDULERS):
            pods += [
                _pod(f"claim-{index}", scheduler, template="one"),
                _pod(f"xr-{index}", scheduler, resource=self.explicit),
                _pod(f"implicit-{index}", scheduler, resource=self.implicit),
                _pod(f"group-{index}", scheduler, template="one", group="gang"),
            ]
        answers = await asyncio.gather(
            *(api.create(PODS, pod, namespace=self.namespace) for pod in pods),
            return_exceptions=True,
        )
        refused = 0
        kinds: set[str] = set()
        for answer in answers:
            if isinstance(answer, APIForbiddenError):
                refused += 1
            elif isinstance(answer, BaseException):
                raise answer
            else:
                kinds.add(_kind(answer))
        return refused, tuple(sorted(kinds))

    def _slice(self, node: str) -> dict[str, Any]:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-slice"},
            "spec": {
                "driver": self.driver,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "nodeName": node,
                "devices": [{"name": f"gpu-{i}"} for i in range(2)],
            },
        }

    def _class(self) -> dict[str, Any]:
        expression = f"device.driver == '{self.driver}'"
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": self.device_class},
            "spec": {
                "selectors": [{"cel": {"expression": expression}}],
                "extendedResourceName": self.explicit,
            },
        }

    async def _read(self, api: Client) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        pods = await api.list(PODS, namespace=self.namespace)
        claims = await api.list(dra("resourceclaims"), namespace=self.namespace)
        return list(pods.get("items") or ()), list(claims.get("items") or ())

    async def wait_settled(self, api: Client, timeout: float) -> bool:
        """Until every device is allocated, or no pod waits, and nothing changed for a few
        polls (or for many, with pods waiting); False after the timeout."""
        deadline = time.monotonic() + timeout
        last: tuple[tuple[str, str], ...] = ()
        stable = 0
        while time.monotonic() < deadline:
            pods, claims = await self._read(api)
            seen = tuple(
                sorted(
                    (o["metadata"]["name"], o["metadata"]["resourceVersion"])
                    for o in [*pods, *claims]
                )
            )
            stable = stable + 1 if seen == last else 0
            last = seen
            waiting = any(not p["spec"].get("nodeName") for p in pods)
            done = len(_device_users(claims)) == DEVICES or not waiting
            if stable >= (_STABLE_POLLS if done else _QUIET_POLLS):
                return True
            await asyncio.sleep(_POLL)
        return False

    async def measure(
        self, api: Client, run: int, settled: bool, refused: int, kinds: tuple[str, ...]
    ) -> Race:
        pods, claims = await self._read(api)
        state = await verify.read_cluster(api, namespace=self.namespace)
        found = verify.check(state)
        if found:  # as the CLI does: count only what a second reading confirms
            seen = {(v.code, v.kind, v.name) for v in found}
            state = await verify.read_cluster(api, namespace=self.namespace)
            found = [v for v in verify.check(state) if (v.code, v.kind, v.name) in seen]
        users = _device_users(claims)
        foreign = tuple(
            sorted(
                p["metadata"]["name"]
                for p in pods
                if p["spec"].get("nodeName") and p["spec"].get("schedulerName") != SCHEDULERS[1]
            )
        )
        return Race(
            run=run,
            settled=settled,
            overallocated=sum(1 for owners in users.values() if len(owners) > 1),
            violations=tuple(sorted(f"{v.code} {v.kind} {v.name}" for v in found)),
            foreign=foreign,
            refused=refused,
            bound=sum(1 for p in pods if p["spec"].get("nodeName")),
            used=len(users),
            kinds=kinds,
        )

    async def delete(self, api: Client) -> None:
        await delete_scene(api, self.namespace, self.nodes, self.device_class)


def _pod(
    name: str,
    scheduler: str,
    *,
    template: str | None = None,
    resource: str | None = None,
    group: str | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "x"}
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [container]}
    if template is not None:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
        container["resources"] = {"claims": [{"name": "gpu"}]}
    if resource is not None:
        container["resources"] = {"requests": {resource: "1"}, "limits": {resource: "1"}}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _kind(pod: Mapping[str, Any]) -> str:
    """claims, pod-group (the server kept `schedulingGroup`), explicit or implicit."""
    spec = pod["spec"]
    if spec.get("resourceClaims"):
        return "pod-group" if spec.get("schedulingGroup") else "claims"
    requests = spec["containers"][0]["resources"]["requests"]
    implicit = any(n.startswith("deviceclass.resource.kubernetes.io/") for n in requests)
    return "implicit-extended-resource" if implicit else "explicit-extended-resource"


def _device_users(claims: list[Mapping[str, Any]]) -> dict[tuple[str, str, str], set[str]]:
    """Each allocated device and the claims holding it (extended-resource claims included)."""
    users: dict[tuple[str, str, str], set[str]] = collections.defaultdict(set)
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or ():
            users[(result["driver"], result["pool"], result["device"])].add(
                claim["metadata"]["name"]
            )
    return users
