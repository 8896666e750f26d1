"""`dra-operator explain pod|claim NAME` (also `kubectl dra explain`): why no devices, or which.

Reads the cluster as `verify` does (plus DeviceClasses), runs the allocator in explain mode
(see `_diagnose`) and prints, per candidate node and request, the funnel of devices and the
stage that blocks. Exit status: 0 when everything is allocated, 3 when something is not
(explained), 1 when the object does not exist, 2 when the cluster could not be read.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from pathlib import Path

import click

from dra_operator import verify
from dra_operator.allocator import Features
from dra_operator.cli._diagnose import Diagnosis, diagnose_claim, diagnose_pod
from dra_operator.errors import APIError, InvalidObjectError
from dra_operator.kube import Client

__all__ = ["command"]

_OK, _MISSING, _UNREADABLE, _UNALLOCATED = 0, 1, 2, 3


async def _read(kubeconfig: Path | None, namespace: str) -> verify.ClusterState:
    async with Client.from_kubeconfig(kubeconfig) as api:
        return await verify.read_cluster(api, namespace=namespace, with_classes=True)


def _table(found: Diagnosis) -> str:
    lines = []
    for claim in found.allocated:
        lines.append(f"claim {claim.claim}: allocated on node {claim.node}")
        lines += [f"  {device}" for device in claim.devices]
    for name in found.missing:
        lines.append(f"claim {name}: does not exist yet (the claims controller creates it)")
    if found.pending:
        lines.append(f"not allocated: {', '.join(found.pending)}")
    if found.error:
        lines.append(f"  error: {found.error}")
    for verdict in found.nodes:
        if verdict.fits:
            lines.append(f"  node {verdict.node}: the claims fit (not allocated yet)")
            continue
        lines.append(f"  node {verdict.node}: {verdict.summary}")
        for request in verdict.requests:
            need = f"{request.needed} needed" if request.needed else "all needed"
            steps = " → ".join(f"{s.name} {s.remaining}" for s in request.stages)
            lines.append(
                f"    claim {request.claim}, request {request.request} ({need}): "
                f"considered {request.considered} → {steps}"
            )
            if request.blocking:
                lines.append(f"      blocked at {request.blocking}")
        lines += [f"    {pool}" for pool in verdict.pools]
    if found.is_allocated:
        lines.append(f"{found.subject}: every claim is allocated")
    return "\n".join(lines)


@click.command("explain")
@click.argument("kind", type=click.Choice(["pod", "claim"]))
@click.argument("name")
@click.option("-n", "--namespace", default="default", show_default=True)
@click.option(
    "-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Kubeconfig to use [default: $KUBECONFIG, in-cluster, ~/.kube/config].",
)
@click.option(
    "--kubernetes-version",
    default="1.36",
    show_default=True,
    help="Mimic the default feature gates of this release.",
)
def command(
    kind: str,
    name: str,
    namespace: str,
    output: str,
    kubeconfig: Path | None,
    kubernetes_version: str,
) -> None:
    """Explain why a pod's or claim's devices are (not) allocated."""
    try:
        features = Features.for_kubernetes(kubernetes_version)
        state = asyncio.run(_read(kubeconfig, namespace))
    except (APIError, InvalidObjectError, OSError) as exc:
        click.echo(f"cannot read the cluster: {exc}", err=True)
        sys.exit(_UNREADABLE)
    diagnose = diagnose_pod if kind == "pod" else diagnose_claim
    found = diagnose(state, namespace, name, features)
    if found is None:
        click.echo(f"{kind} {namespace}/{name} not found", err=True)
        sys.exit(_MISSING)
    if output == "json":
        body = dataclasses.asdict(found) | {"is_allocated": found.is_allocated}
        click.echo(json.dumps(body, indent=2))
    else:
        click.echo(_table(found))
    sys.exit(_OK if found.is_allocated else _UNALLOCATED)
