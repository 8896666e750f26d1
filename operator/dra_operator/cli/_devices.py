"""`kubectl dra devices [--node N]`: every published device, its pool and which claims hold it.

Reads the cluster as `verify` does. Only the newest generation of each pool is shown (older
slices are being replaced); a device without a holder is free. `-o wide` adds the slice.
"""

from __future__ import annotations

import asyncio
import sys

import click

from dra_operator import verify
from dra_operator.cli._cluster_options import Target, cluster_options
from dra_operator.cli._output import output_option, print_document
from dra_operator.errors import APIError, InvalidObjectError
from dra_operator.kube import Client
from dra_operator.model import DeviceID, ResourceSlice

__all__ = ["command"]

_UNREADABLE = 2


async def _read(target: Target) -> verify.ClusterState:
    async with Client(target.config()) as api:
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
@output_option
@cluster_options
def command(node: str | None, output: str, target: Target) -> None:
    """List every device, its pool and the claims holding it."""
    try:
        state = asyncio.run(_read(target))
    except (APIError, InvalidObjectError, OSError) as exc:
        click.echo(f"cannot read the cluster: {exc}", err=True)
        sys.exit(_UNREADABLE)
    rows = device_rows(state, node)
    if output in ("json", "yaml"):
        print_document({"devices": rows}, output)
        return
    keys = ["node", "driver", "pool", "device"] + (["slice"] if output == "wide" else [])
    table = [[key.upper() for key in keys] + ["CLAIMS"]] + [
        [str(r[key]) for key in keys] + [", ".join(r["claims"]) or "-"]  # type: ignore[arg-type]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(keys))]
    for cells in table:
        padded = [c.ljust(w) for c, w in zip(cells, widths, strict=False)]
        click.echo("  ".join([*padded, cells[-1]]))
