"""`kubectl dra devices [--node N]`: every published device, its pool and which claims hold it.

Reads the cluster as `verify` does. Only the newest generation of each pool is shown (older
slices are being replaced); a device without a holder is free.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click

from dra_operator import verify
from dra_operator.errors import APIError, InvalidObjectError
from dra_operator.kube import Client
from dra_operator.model import DeviceID, ResourceSlice

__all__ = ["command"]

_UNREADABLE = 2


async def _read(kubeconfig: Path | None) -> verify.ClusterState:
    async with Client.from_kubeconfig(kubeconfig) as api:
        return await verify.read_cluster(api)


def _where(piece: ResourceSlice) -> str:
    if piece.node_name:
        return piece.node_name
    if piece.all_nodes:
        return "(all nodes)"
    if piece.per_device_node_selection:
        return "(per device)"
    return "(node selector)"


def device_rows(state: verify.ClusterState, node: str | None) -> list[dict[str, object]]:
    """One row per device of the newest pool generations, sorted by node, driver, pool, name."""
    newest: dict[tuple[str, str], int] = {}
    for piece in state.slices:
        key = (piece.driver, piece.pool.name)
        newest[key] = max(newest.get(key, piece.pool.generation), piece.pool.generation)
    holders: dict[DeviceID, list[str]] = {}
    for claim in state.claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        ref = f"{claim.metadata.namespace}/{claim.metadata.name}"
        for r in allocation.devices.results:
            how = " (admin)" if r.admin_access else " (shared)" if r.share_id else ""
            holders.setdefault(DeviceID(r.driver, r.pool, r.device), []).append(ref + how)
    rows: list[dict[str, object]] = []
    for piece in state.slices:
        if piece.pool.generation != newest[(piece.driver, piece.pool.name)]:
            continue
        where = _where(piece)
        for device in piece.devices:
            device_node = device.node_name or where
            if node is not None and device_node != node:
                continue
            held = holders.get(DeviceID(piece.driver, piece.pool.name, device.name), [])
            rows.append(
                {
                    "node": device_node,
                    "driver": piece.driver,
                    "pool": piece.pool.name,
                    "device": device.name,
                    "slice": piece.metadata.name,
                    "claims": sorted(held),
                }
            )
    rows.sort(key=lambda r: (str(r["node"]), str(r["driver"]), str(r["pool"]), str(r["device"])))
    return rows


@click.command("devices")
@click.option("--node", default=None, help="Only the devices of this node.")
@click.option(
    "-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Kubeconfig to use [default: $KUBECONFIG, in-cluster, ~/.kube/config].",
)
def command(node: str | None, output: str, kubeconfig: Path | None) -> None:
    """List every device, its pool and the claims holding it."""
    try:
        state = asyncio.run(_read(kubeconfig))
    except (APIError, InvalidObjectError, OSError) as exc:
        click.echo(f"cannot read the cluster: {exc}", err=True)
        sys.exit(_UNREADABLE)
    rows = device_rows(state, node)
    if output == "json":
        click.echo(json.dumps({"devices": rows}, indent=2))
        return
    header = ("NODE", "DRIVER", "POOL", "DEVICE", "CLAIMS")
    table = [header] + [
        (
            str(r["node"]),
            str(r["driver"]),
            str(r["pool"]),
            str(r["device"]),
            ", ".join(r["claims"]) or "-",  # type: ignore[arg-type]
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + row[-1])
