"""One repetition of the coexistence race, and what it left behind (docs/coexistence.md).

Per repetition, in a fresh namespace: two Ready nodes with `DEVICES_PER_NODE` devices each of
a driver no other repetition uses, a class for it, a one-device template and one shared
one-device claim. Then, all at once, `TEMPLATE_PODS` pods from the template and
`SHARED_PODS` pods sharing the claim, alternately naming kube-scheduler (`default-scheduler`)
and dra-operator: more pods than devices. `race_once` waits until nothing moves any more and
counts what the invariants forbid: devices allocated to two claims, pod claims with two
generated claims, stale reservations, any `verify` violation, and bound pods that do not match
the allocations. It then deletes what it made, so repetitions do not pile up.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from dra_operator import controlplane, names, verify
from dra_operator.errors import APIError, APINotFoundError
from dra_operator.kube import NAMESPACES, NODES, PODS, Client, Resource, dra

__all__ = [
    "DEVICES",
    "ROUTING_POLICIES",
    "Components",
    "RaceResult",
    "install_routing",
    "race_once",
    "remove_routing",
    "summarize",
]

_REPO = Path(__file__).resolve().parents[2]
ROUTING_POLICIES = (
    _REPO / "deploy" / "components" / "route-claims" / "policy.yaml",
    _REPO / "deploy" / "components" / "require-scheduler" / "policy.yaml",
)
DEVICES_PER_NODE = 2
NODES_PER_RUN = 2
DEVICES = DEVICES_PER_NODE * NODES_PER_RUN
TEMPLATE_PODS = 6
SHARED_PODS = 2
SCHEDULERS = ("default-scheduler", names.DEFAULT_SCHEDULER_NAME)
SETTLE_TIMEOUT = 120.0
_STABLE_POLLS = 4
_POLL = 0.5

_ADMISSION = "admissionregistration.k8s.io"


@dataclasses.dataclass(frozen=True, slots=True)
class RaceResult:
    """What one repetition left: counts of what the invariants forbid, and the binding tally.

    `expected_bound`: pods whose claims are all allocated and reserved for them, which is
    exactly the pods that should be bound; `devices_used`: distinct devices allocated.
    """

    run: int
    seconds: float
    settled: bool
    overallocated: int
    duplicate_claims: int
    stale_reservations: int
    violations: tuple[str, ...]
    bound: int
    expected_bound: int
    devices_used: int

    @property
    def safe(self) -> bool:
        return (
            self.settled
            and self.overallocated == 0
            and self.duplicate_claims == 0
            and self.stale_reservations == 0
            and not self.violations
            and self.bound == self.expected_bound
            and self.devices_used == DEVICES
        )


class Components:
    """The control plane's processes, stopped and started from a race; `state` stays current."""

    def __init__(self, state: controlplane.ControlPlaneState) -> None:
        self.state = state

    async def restart(self, name: str, *, start: bool = True) -> None:
        """Stop `name` and, unless `start` is False, start it again as it was."""
        self.state = await asyncio.to_thread(controlplane.restart, self.state, name, start=start)


async def install_routing(api: Client) -> None:
    """Apply both routing policies of deploy/components and their bindings (create or keep)."""
    for path in ROUTING_POLICIES:
        for doc in yaml.safe_load_all(path.read_text()):
            resource = _admission(doc["kind"])
            with contextlib.suppress(APIError):
                await api.delete(resource, doc["metadata"]["name"])
            await api.create(resource, doc)


async def remove_routing(api: Client) -> None:
    for path in ROUTING_POLICIES:
        for doc in yaml.safe_load_all(path.read_text()):
            with contextlib.suppress(APINotFoundError):
                await api.delete(_admission(doc["kind"]), doc["metadata"]["name"])


def _admission(kind: str) -> Resource:
    """The admissionregistration.k8s.io/v1 resource of a policy or binding kind."""
    plural = kind.lower().removesuffix("y") + ("ies" if kind.endswith("y") else "s")
    return Resource(_ADMISSION, "v1", plural, namespaced=False)


async def race_once(
    api: Client,
    run: int,
    *,
    during: Callable[[], Awaitable[None]] | None = None,
    settle_timeout: float = SETTLE_TIMEOUT,
) -> RaceResult:
    """One repetition as the module docstring says; `during` runs right after the pods are
    created (a component restart, for instance). A race not settled after `settle_timeout`
    seconds is measured as it stands and counts as unsafe."""
    started = time.monotonic()
    scene = _Scene(run)
    try:
        await scene.create(api)
        if during is not None:
            await during()
        settled = await scene.wait_settled(api, settle_timeout)
        return await scene.measure(api, run, settled, time.monotonic() - started)
    finally:
        await scene.delete(api)


class _Scene:
    def __init__(self, run: int) -> None:
        suffix = uuid.uuid4().hex[:6]
        self.namespace = f"race-{run}-{suffix}"
        self.driver = f"race-{run}-{suffix}.example.com"
        self.device_class = f"race-{run}-{suffix}"
        self.nodes = [f"race-{run}-{suffix}-{i}" for i in range(NODES_PER_RUN)]

    async def create(self, api: Client) -> None:
        ns = self.namespace
        await api.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        for node in self.nodes:
            await controlplane.create_ready_node(api, node)
            await api.create(dra("resourceslices"), self._slice(node))
        await api.create(dra("deviceclasses"), self._class())
        spec = {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": self.device_class}}]
            }
        }
        await api.create(
            dra("resourceclaimtemplates"),
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one", "namespace": ns},
                "spec": {"spec": spec},
            },
        )
        await api.create(
            dra("resourceclaims"),
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "shared", "namespace": ns},
                "spec": spec,
            },
        )
        pods = [_pod(f"t{i}", SCHEDULERS[i % 2], template="one") for i in range(TEMPLATE_PODS)] + [
            _pod(f"s{i}", SCHEDULERS[i % 2], claim="shared") for i in range(SHARED_PODS)
        ]
        await asyncio.gather(*(api.create(PODS, pod, namespace=ns) for pod in pods))

    def _slice(self, node: str) -> dict[str, Any]:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-slice"},
            "spec": {
                "driver": self.driver,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "nodeName": node,
                "devices": [{"name": f"gpu-{i}"} for i in range(DEVICES_PER_NODE)],
            },
        }

    def _class(self) -> dict[str, Any]:
        expression = f"device.driver == '{self.driver}'"
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": self.device_class},
            "spec": {"selectors": [{"cel": {"expression": expression}}]},
        }

    async def _read(self, api: Client) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        pods = await api.list(PODS, namespace=self.namespace)
        claims = await api.list(dra("resourceclaims"), namespace=self.namespace)
        return list(pods.get("items") or ()), list(claims.get("items") or ())

    async def wait_settled(self, api: Client, timeout: float) -> bool:
        """Until every template pod has its claim, every device is allocated, every reserved
        pod is bound, and nothing changed for a few polls; False after the timeout."""
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
            if stable >= _STABLE_POLLS and _looks_done(pods, claims):
                return True
            await asyncio.sleep(_POLL)
        return False

    async def measure(self, api: Client, run: int, settled: bool, seconds: float) -> RaceResult:
        pods, claims = await self._read(api)
        state = await verify.read_cluster(api, namespace=self.namespace)
        found = verify.check(state)
        if found:  # as the CLI does: count only what a second reading confirms
            seen = {(v.code, v.kind, v.name) for v in found}
            state = await verify.read_cluster(api, namespace=self.namespace)
            found = [v for v in verify.check(state) if (v.code, v.kind, v.name) in seen]
        users = _device_users(claims)
        return RaceResult(
            run=run,
            seconds=seconds,
            settled=settled,
            overallocated=sum(1 for owners in users.values() if len(owners) > 1),
            duplicate_claims=_duplicate_claims(claims),
            stale_reservations=sum(1 for v in found if v.code == verify.Code.RESERVATION_STALE),
            violations=tuple(sorted(f"{v.code} {v.kind} {v.name}" for v in found)),
            bound=sum(1 for pod in pods if pod["spec"].get("nodeName")),
            expected_bound=_expected_bound(pods, claims),
            devices_used=len(users),
        )

    async def delete(self, api: Client) -> None:
        await delete_scene(api, self.namespace, self.nodes, self.device_class)


async def delete_scene(
    api: Client, namespace: str, nodes: Iterable[str], device_class: str
) -> None:
    """What a race made, gone: its pods at once (no kubelet would ever confirm), then the
    namespace, each node with its `<node>-slice`, and the class. The routing race of
    tests/integration deletes its scenes with it too."""
    with contextlib.suppress(APIError):
        pods = await api.list(PODS, namespace=namespace)
        await asyncio.gather(
            *(
                api.delete(PODS, p["metadata"]["name"], namespace=namespace, grace_period_seconds=0)
                for p in pods.get("items") or ()
            ),
            return_exceptions=True,
        )
    with contextlib.suppress(APIError):
        await api.delete(NAMESPACES, namespace)
    for node in nodes:
        with contextlib.suppress(APIError):
            await api.delete(dra("resourceslices"), f"{node}-slice")
        with contextlib.suppress(APIError):
            await api.delete(NODES, node)
    with contextlib.suppress(APIError):
        await api.delete(dra("deviceclasses"), device_class)


def _pod(
    name: str, scheduler: str, *, template: str | None = None, claim: str | None = None
) -> dict[str, Any]:
    entry = {"name": "gpu"}
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    if claim is not None:
        entry["resourceClaimName"] = claim
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [entry],
        },
    }


def _results(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def _device_users(claims: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], set[str]]:
    """Each allocated device and the claims holding it."""
    users: dict[tuple[str, str, str], set[str]] = collections.defaultdict(set)
    for claim in claims:
        for result in _results(claim):
            device = (result["driver"], result["pool"], result["device"])
            users[device].add(claim["metadata"]["name"])
    return users


def _duplicate_claims(claims: Iterable[Mapping[str, Any]]) -> int:
    """Pod claims for which more than one claim was generated."""
    generated: collections.Counter[tuple[str, str]] = collections.Counter()
    for claim in claims:
        metadata = claim["metadata"]
        pod_claim = (metadata.get("annotations") or {}).get(names.POD_CLAIM_NAME_ANNOTATION)
        owner = next(
            (o["uid"] for o in metadata.get("ownerReferences") or () if o.get("controller")), None
        )
        if pod_claim and owner:
            generated[(owner, pod_claim)] += 1
    return sum(1 for count in generated.values() if count > 1)


def _claim_of(
    pod: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    entry = pod["spec"]["resourceClaims"][0]
    name = entry.get("resourceClaimName")
    if name is None:
        statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or ()
        name = next(
            (s.get("resourceClaimName") for s in statuses if s["name"] == entry["name"]), None
        )
    return claims.get(name) if name else None


def _expected_bound(pods: Iterable[Mapping[str, Any]], claims: Iterable[Mapping[str, Any]]) -> int:
    by_name = {c["metadata"]["name"]: c for c in claims}
    count = 0
    for pod in pods:
        claim = _claim_of(pod, by_name)
        if claim is None or not _results(claim):
            continue
        reserved = (claim.get("status") or {}).get("reservedFor") or ()
        if any(r.get("uid") == pod["metadata"]["uid"] for r in reserved):
            count += 1
    return count


def _looks_done(pods: list[Mapping[str, Any]], claims: list[Mapping[str, Any]]) -> bool:
    by_name = {c["metadata"]["name"]: c for c in claims}
    for pod in pods:
        if (
            pod["spec"]["resourceClaims"][0].get("resourceClaimTemplateName")
            and _claim_of(pod, by_name) is None
        ):
            return False  # its claim is not created (or not published) yet
    if len(_device_users(claims)) < DEVICES:
        return False
    return _expected_bound(pods, claims) == sum(1 for p in pods if p["spec"].get("nodeName"))


def summarize(results: Iterable[RaceResult]) -> dict[str, int]:
    """Totals over repetitions: the violations each kind of check found, and unsafe runs."""
    done = list(results)
    return {
        "runs": len(done),
        "unsafe_runs": sum(1 for r in done if not r.safe),
        "overallocated_devices": sum(r.overallocated for r in done),
        "duplicate_claims": sum(r.duplicate_claims for r in done),
        "stale_reservations": sum(r.stale_reservations for r in done),
        "verify_violations": sum(len(r.violations) for r in done),
        "unsettled_runs": sum(1 for r in done if not r.settled),
        "bound_not_as_allocated": sum(1 for r in done if r.bound != r.expected_bound),
    }
