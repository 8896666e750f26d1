"""`dra-operator demo`: what `make demo` runs, allocations happening live.

It starts a fresh local control plane (etcd + kube-apiserver, no kube-scheduler or
kube-controller-manager), registers two fake Ready nodes, publishes the example driver's
DeviceClass and ResourceSlices, starts `dra-operator run` under the operator's RBAC-limited
identity, creates the workloads in examples/workloads.yaml and shows a live table of pods →
nodes → claims → devices until everything settles. Then it deletes one trainer, so the pod that
did not fit schedules onto the freed device, and says how to poke at what is left.
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
from dra_operator.kube import CORE_EVENTS, NAMESPACES, PODS, Client, Resource, dra

__all__ = ["command"]

_console = Console(soft_wrap=True)
_FIELD_MANAGER = "dra-operator-demo"
_NAMESPACE = "dra-demo"
_NODES = ("node-1", "node-2")
_SETTLE_SECONDS = 120.0
_FILES = ("deviceclass.yaml", "resourceslices.yaml", "workloads.yaml")


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
    state = start(state_dir=directory, rbac=find_rbac_dir(examples))
    docs = [
        doc
        for name in _FILES
        for doc in yaml.safe_load_all((examples / name).read_text())
        if isinstance(doc, dict)
    ]
    log = directory / "operator.log"
    operator = _start_operator(state.operator_kubeconfig, log)
    try:
        settled = asyncio.run(_story(state.admin_kubeconfig, docs, operator))
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
        _console.print(f"  dra-operator explain pod trainer-2 -n {_NAMESPACE}")
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
    kubeconfig: Path, docs: list[dict[str, Any]], operator: subprocess.Popen[bytes]
) -> bool:
    async with Client.from_kubeconfig(kubeconfig) as api:
        for node in _NODES:
            await controlplane.create_ready_node(api, node)
        _console.print(f"registered fake Ready nodes {', '.join(_NODES)} (no kubelet runs)")
        for doc in docs:
            await _create(api, doc)
        _console.print(f"started dra-operator run (pid {operator.pid}) and created the workloads")
        settled = await _watch(api, operator, "scheduling the example workloads", _all_settled)
        if not settled:
            return False
        await api.delete(PODS, "trainer-0", namespace=_NAMESPACE, grace_period_seconds=0)
        _console.print(
            "deleted trainer-0: its claim is deallocated and deleted, trainer-2 takes the device"
        )
        return await _watch(api, operator, "after deleting trainer-0", _trainer_2_bound)


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


_Settled = Callable[[list[dict[str, Any]], dict[str, str]], bool]


async def _watch(
    api: Client, operator: subprocess.Popen[bytes], title: str, settled: _Settled
) -> bool:
    deadline = time.monotonic() + _SETTLE_SECONDS
    with Live(Table(title=title), console=_console, refresh_per_second=4) as live:
        while True:
            pods, claims, failures = await _read(api)
            live.update(_table(title, pods, claims, failures))
            if settled(pods, failures):
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


def _all_settled(pods: list[dict[str, Any]], failures: dict[str, str]) -> bool:
    return bool(pods) and all(
        p["spec"].get("nodeName") or p["metadata"]["name"] in failures for p in pods
    )


def _trainer_2_bound(pods: list[dict[str, Any]], failures: dict[str, str]) -> bool:
    return any(p["metadata"]["name"] == "trainer-2" and p["spec"].get("nodeName") for p in pods)


def _table(
    title: str,
    pods: list[dict[str, Any]],
    claims: dict[str, dict[str, Any]],
    failures: dict[str, str],
) -> Table:
    table = Table(title=title)
    for column in ("pod", "node", "claim", "devices", "reserved for", "why not"):
        table.add_column(column, overflow="fold")
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        name = pod["metadata"]["name"]
        node = pod["spec"].get("nodeName", "")
        for claim_name in _claim_names(pod) or [""]:
            claim = claims.get(claim_name, {})
            status = claim.get("status", {})
            results = status.get("allocation", {}).get("devices", {}).get("results", [])
            devices = ", ".join(f"{r['pool']}/{r['device']}" for r in results)
            reserved = ", ".join(r["name"] for r in status.get("reservedFor", []))
            why = "" if node else failures.get(name, "waiting")
            table.add_row(name, node, claim_name or "(not created yet)", devices, reserved, why)
    return table
