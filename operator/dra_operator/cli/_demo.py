"""`dra-operator demo`: what `make demo` runs, allocations happening live.

It starts a fresh local control plane (etcd + kube-apiserver, no kube-scheduler) with two real
nodes, each a kubelet with its own containerd and the simulated DRA driver publishing the
devices of examples/resourceslices.yaml; starts `dra-operator run` under the operator's
RBAC-limited identity, creates the DeviceClass and the workloads in examples/workloads.yaml and
shows a live table of pods → nodes → claims → allocated devices → the devices each container
itself reports, until every pod runs or waits with a reason. Then it deletes a running pod that
holds a device of the kind the waiting pod wants — whichever pods were placed first — so the
waiting pod takes the freed device, and shows the table again once that pod runs and reports
it. Last, it says how to poke at what is left.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.live import Live
from rich.table import Table

from dra_operator import controlplane
from dra_operator.cli._controlplane import find_rbac_dir, start
from dra_operator.kube import CORE_EVENTS, NAMESPACES, NODES, PODS, Client, Resource, dra

__all__ = ["command"]

_console = Console(soft_wrap=True)
_FIELD_MANAGER = "dra-operator-demo"
_NAMESPACE = "dra-demo"
_NODES = 2
_SETTLE_SECONDS = 180.0
_FILES = ("deviceclass.yaml", "workloads.yaml")
_INVENTORY = "resourceslices.yaml"  # the simulated driver's devices, per node
_DEVICES_LINE = "devices="  # what each example container prints first


def _find_examples(start_dir: Path | None = None) -> Path | None:
    here = (start_dir or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "examples" / "workloads.yaml").is_file():
            return folder / "examples"
    return None


@click.command("demo")
@click.option(
    "--examples",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder with deviceclass.yaml, resourceslices.yaml and workloads.yaml [default: "
    "examples/ of the enclosing source tree].",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="DRA_OPERATOR_STATE_DIR",
    default=None,
    help="Control-plane state directory [default: $XDG_STATE_HOME/dra-operator/controlplane].",
)
@click.option("--down", "stop_after", is_flag=True, help="Stop the control plane at the end.")
def command(examples: Path | None, state_dir: Path | None, stop_after: bool) -> None:
    """Run the operator on a fresh local control plane and watch it allocate devices."""
    examples = examples or _find_examples()
    if examples is None:
        raise click.UsageError("no examples/ folder found: pass --examples")
    directory = state_dir or controlplane.default_state_dir()
    if controlplane.read_state(directory) is not None:
        controlplane.down(directory)  # the demo's story starts from an empty cluster
    state = start(
        state_dir=directory,
        rbac=find_rbac_dir(examples),
        nodes=_NODES,
        devices=examples / _INVENTORY,
        timeout=180.0,
    )
    docs = [
        doc
        for name in _FILES
        for doc in yaml.safe_load_all((examples / name).read_text())
        if isinstance(doc, dict)
    ]
    log = directory / "operator.log"
    operator = _start_operator(state.operator_kubeconfig, log)
    try:
        kubectl = controlplane.find_binaries().path("kubectl")
        settled = asyncio.run(_story(state.admin_kubeconfig, kubectl, docs, operator))
    finally:
        _stop(operator)
    _console.print(f"operator log: {log}")
    if stop_after:
        controlplane.down(directory)
        _console.print("control plane stopped")
    else:
        kubeconfig = shlex.quote(str(state.admin_kubeconfig))
        _console.print("poke at it (the control plane keeps running):")
        _console.print(f"  export KUBECONFIG={kubeconfig}")
        _console.print(f"  kubectl get pods,resourceclaims -n {_NAMESPACE} -o wide")
        _console.print(f"  dra-operator verify -n {_NAMESPACE}")
        _console.print(f"  kubectl logs inference-a -n {_NAMESPACE}   # the devices it got")
        _console.print(f"  dra-operator run --kubeconfig {state.operator_kubeconfig}")
        _console.print("  dra-operator controlplane down")
    if not settled:
        raise click.ClickException(f"the demo did not settle; see {log}")


def _start_operator(kubeconfig: Path, log: Path) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-c",
        "from dra_operator.cli import main; main()",
        "run",
        f"--kubeconfig={kubeconfig}",
        "--no-leader-elect",
        "--log-format=json",
    ]
    with log.open("wb") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


async def _story(
    kubeconfig: Path, kubectl: Path, docs: list[dict[str, Any]], operator: subprocess.Popen[bytes]
) -> bool:
    async with Client.from_kubeconfig(kubeconfig) as api:
        nodes = sorted(n["metadata"]["name"] for n in (await api.list(NODES))["items"])
        _console.print(
            f"real nodes {', '.join(nodes)}: a kubelet, containerd and the simulated driver "
            f"each, publishing the devices of {_INVENTORY}"
        )
        for doc in docs:
            await _create(api, doc)
        _console.print(f"started dra-operator run (pid {operator.pid}) and created the workloads")
        seen = _ContainerDevices(kubectl, kubeconfig)
        title = "scheduling the example workloads"
        if not await _watch(api, seen, operator, title, _all_settled):
            return False
        pods, _, _ = await _read(api)
        waiting = sorted(p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName"))
        if not waiting:
            _console.print("every pod fit: no device to free")
            return True
        waiter = waiting[0]
        holder = _holder_for(waiter, pods)
        if holder is None:
            _console.print(f"{waiter} waits, but no running pod uses its kind of claim")
            return True
        await api.delete(PODS, holder, namespace=_NAMESPACE)
        _console.print(
            f"deleted {holder}: once its kubelet has stopped it and the driver unprepared its "
            f"device, its claim is deallocated and deleted, and {waiter} takes the device"
        )
        return await _watch(api, seen, operator, f"after deleting {holder}", _running(waiter))


def _template_of(pod: dict[str, Any]) -> str | None:
    return next(
        (
            e.get("resourceClaimTemplateName")
            for e in pod["spec"].get("resourceClaims", [])
            if e.get("resourceClaimTemplateName")
        ),
        None,
    )


def _holder_for(waiter: str, pods: list[dict[str, Any]]) -> str | None:
    """A bound pod whose claim comes from the same template as the waiting pod's: deleting
    it frees a device the waiting pod can take (whichever pods the scheduler placed first)."""
    by_name = {p["metadata"]["name"]: p for p in pods}
    template = _template_of(by_name[waiter])
    bound = sorted(
        name
        for name, pod in by_name.items()
        if pod["spec"].get("nodeName") and template and _template_of(pod) == template
    )
    return bound[0] if bound else None


class _ContainerDevices:
    """What each running container printed as its devices (`devices=` from `DRA_DEVICES`),
    read once per pod with the built kubectl: what the container itself got."""

    def __init__(self, kubectl: Path, kubeconfig: Path) -> None:
        self._kubectl = kubectl
        self._kubeconfig = kubeconfig
        self._seen: dict[str, str] = {}  # pod UID -> devices line

    def of(self, pod: dict[str, Any]) -> str | None:
        return self._seen.get(pod["metadata"]["uid"])

    async def refresh(self, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            uid = pod["metadata"]["uid"]
            if uid in self._seen or pod.get("status", {}).get("phase") != "Running":
                continue
            proc = await asyncio.create_subprocess_exec(
                str(self._kubectl),
                f"--kubeconfig={self._kubeconfig}",
                "logs",
                f"--namespace={_NAMESPACE}",
                pod["metadata"]["name"],
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            out, _ = await proc.communicate()
            for line in out.decode(errors="replace").splitlines():
                if line.startswith(_DEVICES_LINE):
                    self._seen[uid] = line.removeprefix(_DEVICES_LINE).replace(",", ", ")


async def _create(api: Client, doc: dict[str, Any]) -> None:
    kind = doc["kind"]
    namespace = doc["metadata"].get("namespace")
    resource = _resource(kind, doc["apiVersion"])
    if namespace is None:
        await api.apply(resource, doc, field_manager=_FIELD_MANAGER, force=True)
    else:
        await api.create(resource, doc, namespace=namespace)
    _console.print(f"  created {kind} {doc['metadata']['name']}")


def _resource(kind: str, api_version: str) -> Resource:
    if kind == "Namespace":
        return NAMESPACES
    if kind == "Pod":
        return PODS
    plural = {
        "DeviceClass": "deviceclasses",
        "ResourceSlice": "resourceslices",
        "ResourceClaim": "resourceclaims",
        "ResourceClaimTemplate": "resourceclaimtemplates",
    }[kind]
    return dra(plural, api_version.split("/")[1])


_Settled = Callable[[list[dict[str, Any]], dict[str, str], _ContainerDevices], bool]


async def _watch(
    api: Client,
    seen: _ContainerDevices,
    operator: subprocess.Popen[bytes],
    title: str,
    settled: _Settled,
) -> bool:
    """A live table until `settled`; the last table shown is the settled state."""
    deadline = time.monotonic() + _SETTLE_SECONDS
    with Live(Table(title=title), console=_console, refresh_per_second=4) as live:
        while True:
            pods, claims, failures = await _read(api)
            await seen.refresh(pods)
            live.update(_table(title, pods, claims, failures, seen))
            if settled(pods, failures, seen):
                return True
            if operator.poll() is not None:
                _console.print(f"the operator exited with status {operator.returncode}")
                return False
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.5)


async def _read(
    api: Client,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, str]]:
    pods = (await api.list(PODS, namespace=_NAMESPACE))["items"]
    claims = {
        c["metadata"]["name"]: c
        for c in (await api.list(dra("resourceclaims"), namespace=_NAMESPACE))["items"]
    }
    failures: dict[str, str] = {}
    events = (await api.list(CORE_EVENTS, namespace=_NAMESPACE))["items"]
    for event in sorted(events, key=lambda e: e["metadata"].get("creationTimestamp", "")):
        if event.get("reason") == "FailedScheduling":
            failures[event["involvedObject"]["name"]] = event.get("message", "")
    return pods, claims, failures


def _claim_names(pod: dict[str, Any]) -> list[str]:
    generated = {
        s["name"]: s.get("resourceClaimName", "")
        for s in pod.get("status", {}).get("resourceClaimStatuses", [])
    }
    return [
        entry.get("resourceClaimName") or generated.get(entry["name"], "")
        for entry in pod["spec"].get("resourceClaims", [])
    ]


def _reports_devices(pod: dict[str, Any], seen: _ContainerDevices) -> bool:
    return pod.get("status", {}).get("phase") == "Running" and seen.of(pod) is not None


def _all_settled(
    pods: list[dict[str, Any]], failures: dict[str, str], seen: _ContainerDevices
) -> bool:
    """Every pod runs and its container reported its devices, or waits with a reason."""
    return bool(pods) and all(
        _reports_devices(p, seen)
        or (not p["spec"].get("nodeName") and p["metadata"]["name"] in failures)
        for p in pods
    )


def _running(name: str) -> _Settled:
    def settled(
        pods: list[dict[str, Any]], failures: dict[str, str], seen: _ContainerDevices
    ) -> bool:
        return any(p["metadata"]["name"] == name and _reports_devices(p, seen) for p in pods)

    return settled


def _table(
    title: str,
    pods: list[dict[str, Any]],
    claims: dict[str, dict[str, Any]],
    failures: dict[str, str],
    seen: _ContainerDevices,
) -> Table:
    table = Table(title=title)
    columns = ("pod", "node", "phase", "claim", "allocated", "container sees", "why not")
    for column in columns:
        table.add_column(column, overflow="fold")
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        name = pod["metadata"]["name"]
        node = pod["spec"].get("nodeName", "")
        phase = pod.get("status", {}).get("phase", "")
        if pod["metadata"].get("deletionTimestamp"):
            phase = "Terminating"
        for claim_name in _claim_names(pod) or [""]:
            claim = claims.get(claim_name, {})
            status = claim.get("status", {})
            results = status.get("allocation", {}).get("devices", {}).get("results", [])
            devices = ", ".join(f"{r['pool']}/{r['device']}" for r in results)
            why = "" if node else failures.get(name, "waiting")
            table.add_row(
                name,
                node,
                phase,
                claim_name or "(not created yet)",
                devices,
                seen.of(pod) or "",
                why,
            )
    return table
