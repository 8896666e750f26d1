"""One test's world: its namespace, the session's fake driver, and what a user would do there.

Assertions are about outcomes that hold whoever runs the claims controller (the operator's, or
kube-controller-manager's in a full cluster): a pod bound to a node, its claim allocated from
the driver's pool on that node and reserved for the pod, FailedScheduling events, claims
released and deleted. Claim names are read from the pod's status, never guessed, because the
two controllers name generated claims differently. Claims and templates go through the newest
version the server serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.support.dra_objects import claim_spec, claim_template, in_version, resource_claim
from tests.support.operator import wait_for

from dra_operator import names
from dra_operator.app import ServerInfo
from dra_operator.controlplane import TEST_IMAGE, NodeState, find_binaries
from dra_operator.errors import APINotFoundError
from dra_operator.kube import CORE_EVENTS, PODS, Client, JSONObject, PatchType
from dra_operator.model import ClaimNaming, deterministic_claim_name
from e2e._driver import FakeDriver

__all__ = [
    "TAINT_KEY",
    "Scene",
    "allocation",
    "claim_name_of",
    "devices",
    "reserved_for",
]

REQUEST = "gpu"  # the one request of every claim, and the pod's name for its claim
TEMPLATE = "gpu"
CLEANUP_TIMEOUT = 60.0
RUN_TIMEOUT = 120.0  # scheduling, then the kubelet: prepare, sandbox, container
DEVICES_LINE = "devices="
# What a container on a real node runs: prints the claim's devices as the driver gave them.
SHOW_DEVICES = f'echo "{DEVICES_LINE}$DRA_DEVICES"; trap "exit 0" TERM; sleep 3600 & wait'
# The kubelet's event and error when a pod uses a claim not reserved for it
# (pkg/kubelet/cm/dra/manager.go, pkg/kubelet/events).
FAILED_PREPARE = "FailedPrepareDynamicResources"
NOT_RESERVED = "is not allowed to use ResourceClaim"
TAINT_KEY = "e2e.dra-operator.dev/broken"


class Scene:
    """Acts in `namespace` as the admin of `kubeconfig`; `driver` is the session's driver,
    `served` what the server serves.

    With `real_nodes` (the local control plane's kubelets) pods run the busybox test image and
    print the devices they got, and pods are deleted gracefully, so a kubelet stops them and
    unprepares their claims before the pod object goes.
    """

    def __init__(
        self,
        api: Client,
        namespace: str,
        driver: FakeDriver,
        kubeconfig: Path,
        served: ServerInfo,
        *,
        real_nodes: Sequence[NodeState] = (),
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.driver = driver
        self.kubeconfig = kubeconfig
        self.real_nodes = {node.name: node for node in real_nodes}
        self.served = served
        self.claims = served.resource("resourceclaims")
        self.templates = served.resource("resourceclaimtemplates")
        self.deterministic_names = served.claim_naming is ClaimNaming.DETERMINISTIC
        self._rules: dict[str, tuple[str, str]] = {}  # DeviceTaintRule -> (pool, device)

    # -- what a user creates ----------------------------------------------------------------

    def _claim_spec(self, also: str | None = None) -> dict[str, Any]:
        expression = self.driver.selector() + (f" && {also}" if also else "")
        return claim_spec(self.driver.name, selectors=[{"cel": {"expression": expression}}])

    async def template(self, *, also: str | None = None) -> None:
        """ResourceClaimTemplate `gpu`: one device of the driver, selected by attribute and
        capacity, and by the CEL expression `also` when given."""
        spec = self._claim_spec(also)
        body = in_version(claim_template(TEMPLATE, spec), self.templates.version)
        await self.api.create(self.templates, body, namespace=self.namespace)

    async def claim(self, name: str, *, device_class: str | None = None) -> None:
        """ResourceClaim `name`: one device of the driver, or of `device_class` instead."""
        spec = claim_spec(device_class) if device_class else self._claim_spec()
        body = in_version(resource_claim(name, spec), self.claims.version)
        await self.api.create(self.claims, body, namespace=self.namespace)

    def _container(self) -> JSONObject:
        if self.real_nodes:
            return {"name": "main", "image": TEST_IMAGE, "command": ["/bin/sh", "-c", SHOW_DEVICES]}
        return {"name": "pause", "image": "registry.k8s.io/pause:3.10"}

    async def pod(
        self,
        name: str,
        *,
        claim: str | None = None,
        node: str | None = None,
        labels: dict[str, str] | None = None,
        spec: JSONObject | None = None,
        cpu: str | None = None,
    ) -> JSONObject:
        """A pod for the operator's scheduler (or bound to `node` by hand), using ResourceClaim
        `claim` or, without it, a claim generated from the template; `labels` and the `spec`
        fields (affinity, spread, gates, priority) as a workload sets them; `cpu` its
        container's cpu request."""
        source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": TEMPLATE}
        placement = {"nodeName": node} if node else {}
        resources: JSONObject = {"claims": [{"name": REQUEST}]}
        if cpu is not None:
            resources["requests"] = {"cpu": cpu}
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, **({"labels": labels} if labels else {})},
            "spec": {
                "schedulerName": names.DEFAULT_SCHEDULER_NAME,
                **placement,
                **(spec or {}),
                "terminationGracePeriodSeconds": 1,
                "containers": [{**self._container(), "resources": resources}],
                "resourceClaims": [{"name": REQUEST, **source}],
            },
        }
        return await self.api.create(PODS, body, namespace=self.namespace)

    async def delete_pod(self, name: str) -> None:
        """Delete as a user does, the kubelet stopping it (on real nodes), or at once (grace
        period 0) where no kubelet would finish a graceful deletion (kind, without a driver)."""
        grace = 1 if self.real_nodes else 0
        await self.api.delete(PODS, name, namespace=self.namespace, grace_period_seconds=grace)

    # -- what the suite observes ------------------------------------------------------------

    async def get_pod(self, name: str) -> JSONObject | None:
        try:
            return await self.api.get(PODS, name, namespace=self.namespace)
        except APINotFoundError:
            return None

    async def get_claim(self, name: str) -> JSONObject | None:
        try:
            return await self.api.get(self.claims, name, namespace=self.namespace)
        except APINotFoundError:
            return None

    async def placed(self, pod_name: str, *, timeout: float = 60.0) -> tuple[str, JSONObject]:
        """Wait until the pod is bound and its claim allocated and reserved for it: (node,
        claim)."""

        async def done() -> tuple[str, JSONObject] | None:
            pod = await self.get_pod(pod_name)
            node = pod and pod["spec"].get("nodeName")
            claim_name = pod and claim_name_of(pod, deterministic=self.deterministic_names)
            if not pod or not node or not claim_name:
                return None
            claim = await self.get_claim(claim_name)
            uid = pod["metadata"]["uid"]
            if claim is None or not allocation(claim) or uid not in reserved_for(claim):
                return None
            return node, claim

        what = f"pod {pod_name} bound with its claim reserved"
        return await wait_for(done, timeout=timeout, what=what)

    async def running(self, pod_name: str) -> JSONObject:
        """Wait until the pod runs (on a real node: its devices were prepared)."""

        async def done() -> JSONObject | None:
            pod = await self.get_pod(pod_name)
            return pod if pod and (pod.get("status") or {}).get("phase") == "Running" else None

        return await wait_for(done, timeout=RUN_TIMEOUT, what=f"pod {pod_name} Running")

    async def seen_devices(self, pod_name: str) -> list[tuple[str, str]]:
        """(pool, device) of each device the container reports it got (`DRA_DEVICES`)."""

        async def printed() -> list[tuple[str, str]] | None:
            code, out = await self.kubectl("logs", pod_name, f"--namespace={self.namespace}")
            for line in out.splitlines() if code == 0 else ():
                if line.startswith(DEVICES_LINE):
                    listed = line.removeprefix(DEVICES_LINE).split(",")
                    return [(d.split("/")[0], d.split("/")[1]) for d in listed if d]
            return None

        return await wait_for(printed, what=f"the devices pod {pod_name} prints")

    def prepared_on_node(self, node: str, claim: JSONObject) -> bool:
        """Whether the node's driver holds `claim` prepared: its CDI spec (docs/driver.md)."""
        spec = f"{self.driver.name}_{claim['metadata']['uid']}.json"
        return (self.real_nodes[node].cdi_dir / spec).exists()

    async def kubectl(self, *args: str) -> tuple[int, str]:
        """The built kubectl as the admin: (exit status, stdout and stderr)."""
        return await self._as_admin(find_binaries().path("kubectl"), *args)

    async def events(self, pod_name: str, reason: str) -> list[str]:
        found = await self.api.list(
            CORE_EVENTS,
            namespace=self.namespace,
            field_selector=f"involvedObject.name={pod_name},reason={reason}",
        )
        return [e.get("message") or "" for e in found.get("items") or ()]

    async def hold(self, claim: str, finalizer: str) -> None:
        """Add a finalizer of the test's own, so the claim stays readable once deleted."""
        add = [{"op": "add", "path": "/metadata/finalizers/-", "value": finalizer}]
        await self.api.patch(
            self.claims, claim, add, namespace=self.namespace, patch_type=PatchType.JSON
        )

    async def release(self, claim: str, finalizer: str) -> None:
        current = await self.get_claim(claim)
        if current is None:
            return
        kept = [f for f in current["metadata"].get("finalizers") or () if f != finalizer]
        patch = {"metadata": {"finalizers": kept or None}}
        with contextlib.suppress(APINotFoundError):
            await self.api.patch(self.claims, claim, patch, namespace=self.namespace)

    # -- the command line, as a user runs it ------------------------------------------------

    async def cli(self, *args: str) -> tuple[int, str]:
        """`dra-operator ARGS --kubeconfig <admin>`: (exit status, stdout and stderr)."""
        return await self._as_admin(Path(sys.executable).with_name("dra-operator"), *args)

    async def _as_admin(self, program: Path, *args: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            str(program),
            *args,
            f"--kubeconfig={self.kubeconfig}",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await proc.communicate()
        assert proc.returncode is not None
        return proc.returncode, out.decode(errors="replace")

    async def verify_clean(self) -> None:
        """`dra-operator verify` is clean, and no kubelet refused a pod a claim we gave it."""
        code, out = await self.cli("verify", f"--namespace={self.namespace}")
        assert code == 0, out
        assert await self.refusals() == []

    async def refusals(self) -> list[str]:
        """Kubelet events of pods refused their claim: not reserved for them."""
        found = await self.api.list(
            CORE_EVENTS,
            namespace=self.namespace,
            field_selector=f"reason={FAILED_PREPARE}",
        )
        messages = [e.get("message") or "" for e in found.get("items") or ()]
        return [m for m in messages if NOT_RESERVED in m]

    async def taint(self, pool: str, device: str, *, effect: str = "NoExecute") -> str:
        """Taint one device of the driver through a DeviceTaintRule (`dra-operator taint`)."""
        rule = f"e2e-{uuid.uuid4().hex[:10]}"
        self._rules[rule] = (pool, device)
        code, out = await self.cli("taint", *self._taint_args(rule), f"--effect={effect}")
        assert code == 0, out
        return rule

    async def untaint(self, rule: str) -> None:
        code, out = await self.cli("untaint", *self._taint_args(rule))
        assert code == 0, out
        del self._rules[rule]

    def _taint_args(self, rule: str) -> list[str]:
        pool, device = self._rules[rule]
        return [
            f"--driver={self.driver.name}",
            f"--pool={pool}",
            f"--device={device}",
            f"--key={TAINT_KEY}",
            "--via=rule",
            f"--name={rule}",
        ]

    # -- leaving the devices free for the next test -----------------------------------------

    async def clean_up(self) -> None:
        """Remove the test's taints, pods and claims, and wait until its claims are gone, so
        the session's devices are all free again (the operator must still run)."""
        for rule in list(self._rules):
            await self.untaint(rule)
        pods = await self.api.list(PODS, namespace=self.namespace)
        for pod in pods.get("items") or ():
            with contextlib.suppress(APINotFoundError):
                await self.delete_pod(pod["metadata"]["name"])

        async def no_pods() -> bool:
            left = await self.api.list(PODS, namespace=self.namespace)
            return not left.get("items")

        await wait_for(no_pods, timeout=CLEANUP_TIMEOUT, what=f"the pods of {self.namespace} gone")
        claims = await self.api.list(self.claims, namespace=self.namespace)
        for claim in claims.get("items") or ():
            name = claim["metadata"]["name"]
            with contextlib.suppress(APINotFoundError):
                await self.api.delete(self.claims, name, namespace=self.namespace)

        async def no_claims() -> bool:
            left = await self.api.list(self.claims, namespace=self.namespace)
            return not left.get("items")

        await wait_for(
            no_claims, timeout=CLEANUP_TIMEOUT, what=f"the claims of {self.namespace} deleted"
        )


def claim_name_of(pod: JSONObject, *, deterministic: bool = False) -> str | None:
    """The claim behind the pod's `gpu` entry: named in the spec, or generated (status;
    `deterministic`: a release before 1.28, see `model.ClaimNaming`)."""
    for entry in pod["spec"].get("resourceClaims") or ():
        source = entry.get("source") or entry  # 1.26-1.30 nest it in `source`
        if entry.get("name") == REQUEST and source.get("resourceClaimName"):
            return str(source["resourceClaimName"])
        if entry.get("name") == REQUEST and deterministic:
            return deterministic_claim_name(pod["metadata"]["name"], REQUEST)
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
        if status.get("name") == REQUEST and status.get("resourceClaimName"):
            return str(status["resourceClaimName"])
    return None


def allocation(claim: JSONObject) -> JSONObject | None:
    found = (claim.get("status") or {}).get("allocation")
    return found if isinstance(found, dict) else None


def reserved_for(claim: JSONObject) -> list[str]:
    """The UIDs of the claim's consumers."""
    return [str(r.get("uid")) for r in (claim.get("status") or {}).get("reservedFor") or ()]


def devices(claim: JSONObject) -> list[tuple[str, str, str]]:
    """(driver, pool, device) of each allocated device."""
    results: Sequence[JSONObject] = ((allocation(claim) or {}).get("devices") or {}).get(
        "results"
    ) or ()
    return [(r["driver"], r["pool"], r["device"]) for r in results]
