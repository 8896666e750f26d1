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
from dra_operator.errors import APINotFoundError
from dra_operator.kube import CORE_EVENTS, PODS, Client, JSONObject, PatchType
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
TAINT_KEY = "e2e.dra-operator.dev/broken"


class Scene:
    """Acts in `namespace` as the admin of `kubeconfig`; `driver` is the session's driver,
    `served` what the server serves."""

    def __init__(
        self,
        api: Client,
        namespace: str,
        driver: FakeDriver,
        kubeconfig: Path,
        served: ServerInfo,
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.driver = driver
        self.kubeconfig = kubeconfig
        self.served = served
        self.claims = served.resource("resourceclaims")
        self.templates = served.resource("resourceclaimtemplates")
        self._rules: dict[str, tuple[str, str]] = {}  # DeviceTaintRule -> (pool, device)

    # -- what a user creates ----------------------------------------------------------------

    def _claim_spec(self) -> dict[str, Any]:
        selectors = [{"cel": {"expression": self.driver.selector()}}]
        return claim_spec(self.driver.name, selectors=selectors)

    async def template(self) -> None:
        """ResourceClaimTemplate `gpu`: one device of the driver, selected by attribute and
        capacity."""
        body = in_version(claim_template(TEMPLATE, self._claim_spec()), self.templates.version)
        await self.api.create(self.templates, body, namespace=self.namespace)

    async def claim(self, name: str) -> None:
        body = in_version(resource_claim(name, self._claim_spec()), self.claims.version)
        await self.api.create(self.claims, body, namespace=self.namespace)

    async def pod(self, name: str, *, claim: str | None = None) -> JSONObject:
        """A pause pod for the operator's scheduler, using ResourceClaim `claim` or, without
        it, a claim generated from the template."""
        source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": TEMPLATE}
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "schedulerName": names.DEFAULT_SCHEDULER_NAME,
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "pause",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": REQUEST}]},
                    }
                ],
                "resourceClaims": [{"name": REQUEST, **source}],
            },
        }
        return await self.api.create(PODS, body, namespace=self.namespace)

    async def delete_pod(self, name: str) -> None:
        """Delete at once (grace period 0): locally no kubelet would finish a graceful one."""
        await self.api.delete(PODS, name, namespace=self.namespace, grace_period_seconds=0)

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

    async def placed(self, pod_name: str) -> tuple[str, JSONObject]:
        """Wait until the pod is bound and its claim allocated and reserved for it: (node,
        claim)."""

        async def done() -> tuple[str, JSONObject] | None:
            pod = await self.get_pod(pod_name)
            node = pod and pod["spec"].get("nodeName")
            claim_name = pod and claim_name_of(pod)
            if not pod or not node or not claim_name:
                return None
            claim = await self.get_claim(claim_name)
            uid = pod["metadata"]["uid"]
            if claim is None or not allocation(claim) or uid not in reserved_for(claim):
                return None
            return node, claim

        return await wait_for(done, what=f"pod {pod_name} bound with its claim reserved")

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
        proc = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("dra-operator")),
            *args,
            f"--kubeconfig={self.kubeconfig}",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await proc.communicate()
        assert proc.returncode is not None
        return proc.returncode, out.decode(errors="replace")

    async def verify_clean(self) -> None:
        code, out = await self.cli("verify", f"--namespace={self.namespace}")
        assert code == 0, out

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


def claim_name_of(pod: JSONObject) -> str | None:
    """The claim behind the pod's `gpu` entry: named in the spec, or generated (status)."""
    for entry in pod["spec"].get("resourceClaims") or ():
        if entry.get("name") == REQUEST and entry.get("resourceClaimName"):
            return str(entry["resourceClaimName"])
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
