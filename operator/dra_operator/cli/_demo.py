"""`dra-operator demo`: what `make demo` runs.

At this stage: start the local control plane (or reuse the running one), apply the example
DeviceClass and ResourceSlices of the fake `gpu.example.com` driver from examples/, and list
what the API server now holds, read back through the raw client. It grows into a live
allocation demo as the controllers arrive.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

from dra_operator import controlplane
from dra_operator.cli._controlplane import find_rbac_dir, start
from dra_operator.kube import Client, dra

__all__ = ["command"]

_console = Console(soft_wrap=True)
_FIELD_MANAGER = "dra-operator-demo"
_KINDS = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices"}


def _find_examples(start_dir: Path | None = None) -> Path | None:
    here = (start_dir or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "examples" / "deviceclass.yaml").is_file():
            return folder / "examples"
    return None


@click.command("demo")
@click.option(
    "--examples",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder with deviceclass.yaml and resourceslices.yaml [default: examples/ of the "
    "enclosing source tree].",
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
    """Start the local control plane, create the example DRA objects and list them."""
    examples = examples or _find_examples()
    if examples is None:
        raise click.UsageError("no examples/ folder found: pass --examples")
    directory = state_dir or controlplane.default_state_dir()
    state = controlplane.read_state(directory)
    if state is not None and state.components and all(c.is_running() for c in state.components):
        _console.print(f"reusing the control plane {state.version} at {state.server}")
    else:
        state = start(state_dir=directory, rbac=find_rbac_dir(examples))
    docs = [
        doc
        for name in ("deviceclass.yaml", "resourceslices.yaml")
        for doc in yaml.safe_load_all((examples / name).read_text())
        if isinstance(doc, dict) and doc.get("kind") in _KINDS
    ]
    classes, slices = asyncio.run(_apply_and_list(state.admin_kubeconfig, docs))
    _console.print(_class_table(classes))
    _console.print(_slice_table(slices))
    if stop_after:
        controlplane.down(directory)
        _console.print("control plane stopped")
    else:
        kubeconfig = shlex.quote(str(state.admin_kubeconfig))
        _console.print(f"explore: export KUBECONFIG={kubeconfig}; kubectl get resourceslices")
        _console.print("stop:    dra-operator controlplane down")


async def _apply_and_list(
    kubeconfig: Path, docs: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async with Client.from_kubeconfig(kubeconfig) as api:
        for doc in docs:
            resource = dra(_KINDS[doc["kind"]], doc["apiVersion"].split("/")[1])
            await api.apply(resource, doc, field_manager=_FIELD_MANAGER, force=True)
            _console.print(f"applied {doc['kind']} {doc['metadata']['name']}")
        classes = await api.list(dra("deviceclasses"))
        slices = await api.list(dra("resourceslices"))
    return classes["items"], slices["items"]


def _class_table(classes: list[dict[str, Any]]) -> Table:
    table = Table(title="DeviceClasses")
    table.add_column("name")
    table.add_column("selectors")
    for item in classes:
        selectors = [
            s.get("cel", {}).get("expression", "") for s in item["spec"].get("selectors", [])
        ]
        table.add_row(item["metadata"]["name"], "\n".join(selectors))
    return table


def _slice_table(slices: list[dict[str, Any]]) -> Table:
    table = Table(title="ResourceSlices")
    for column in ("name", "driver", "node", "pool", "device", "model", "memory"):
        table.add_column(column, overflow="fold")
    for item in slices:
        spec = item["spec"]
        for device in spec.get("devices", []):
            model = device.get("attributes", {}).get("model", {}).get("string", "")
            memory = device.get("capacity", {}).get("memory", {}).get("value", "")
            table.add_row(
                item["metadata"]["name"],
                spec["driver"],
                spec.get("nodeName", ""),
                spec["pool"]["name"],
                device["name"],
                model,
                memory,
            )
    return table
