"""`dra-operator classic-driver`: a fake classic DRA driver (KEP-3063: 1.31's v1alpha3, or
1.27-1.30's v1alpha2 when the server serves only that), for trying and testing classic mode
(docs/classic.md). Runs until SIGTERM/SIGINT; API failures are retried."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path

import click

from dra_operator.cli._cluster_options import kubeconfig_option
from dra_operator.cli._logging import log_options

__all__ = ["command"]


@click.command("classic-driver")
@click.option(
    "--driver",
    required=True,
    help="Its name: claims with this spec.controller (1.31) or class driverName (1.27-1.30).",
)
@click.option(
    "--nodes",
    required=True,
    help="Comma-separated nodes it can allocate on; every other node is unsuitable.",
)
@click.option("--namespace", default=None, help="Only this namespace [default: all].")
@click.option(
    "--reserve/--no-reserve",
    default=True,
    show_default=True,
    help="Put the pod in reservedFor when allocating (else the scheduler does).",
)
@kubeconfig_option
@log_options
def command(
    driver: str, nodes: str, namespace: str | None, reserve: bool, kubeconfig: Path | None
) -> None:
    """Allocate classic claims for the node the scheduler selects."""
    from dra_operator.driver import ClassicDriver, ClassicDriverSettings
    from dra_operator.kube import Client

    settings = ClassicDriverSettings(
        driver=driver,
        nodes=frozenset(n for n in nodes.split(",") if n),
        namespace=namespace,
        reserve=reserve,
    )

    async def serve() -> None:
        async with Client.from_kubeconfig(kubeconfig) as api:
            served = await api.served_versions("resource.k8s.io")
            version = "v1alpha2" if "v1alpha3" not in served and "v1alpha2" in served else None
            chosen = dataclasses.replace(settings, version=version) if version else settings
            await ClassicDriver(api, chosen).run()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
