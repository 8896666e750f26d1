"""`dra-operator driver`: run the simulated DRA driver for one node (docs/driver.md).

Exit status: 0 after SIGTERM/SIGINT, 2 when the inventory file is bad (the message names the
file, the document and the field) or the checkpoint cannot be read, 1 when a socket or
directory cannot be made. API server failures are retried, never fatal.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from dra_operator.cli._cluster_options import kubeconfig_option
from dra_operator.cli._logging import log_options
from dra_operator.errors import InvalidObjectError

__all__ = ["command"]

_BAD_INPUT, _CANNOT_START = 2, 1


@click.command("driver")
@click.option("--node", required=True, help="The node this driver serves (its pool's name).")
@click.option(
    "--devices",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The device inventory: YAML documents shaped like ResourceSlices.",
)
@click.option(
    "--driver",
    default=None,
    help="The driver name [default: the inventory's spec.driver, else sim.dra-operator.dev].",
)
@click.option(
    "--kubelet-root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/var/lib/kubelet"),
    show_default=True,
    help="The kubelet's --root-dir: sockets go in plugins_registry/ and plugins/<driver>/.",
)
@click.option(
    "--cdi-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/var/run/cdi"),
    show_default=True,
    help="Where CDI spec files are written (a directory the container runtime reads).",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the checkpoint is kept [default: <kubelet-root>/plugins/<driver>].",
)
@kubeconfig_option
@click.option(
    "--metrics-port",
    type=int,
    default=None,
    help="Serve Prometheus metrics on this port [default: not served].",
)
@click.option(
    "--node-allocatable",
    "node_allocatable",
    multiple=True,
    metavar="RESOURCE=COUNTxAMOUNT",
    help="Also publish COUNT devices that each are AMOUNT of a node-allocatable resource "
    "(cpu, memory, hugepages-*), e.g. cpu=4x1 or hugepages-2Mi=2x1Gi; repeatable.",
)
@log_options
def command(
    node: str,
    devices: Path,
    driver: str | None,
    kubelet_root: Path,
    cdi_dir: Path,
    state_dir: Path | None,
    kubeconfig: Path | None,
    metrics_port: int | None,
    node_allocatable: tuple[str, ...],
) -> None:
    """Publish a node's simulated devices and prepare them for the kubelet."""
    from dra_operator.driver import DriverSettings, run_driver

    settings = DriverSettings(
        node=node,
        devices=devices,
        driver=driver,
        kubelet_root=kubelet_root,
        cdi_dir=cdi_dir,
        state_dir=state_dir,
        kubeconfig=kubeconfig,
        metrics_port=metrics_port,
        node_allocatable=node_allocatable,
    )
    try:
        asyncio.run(run_driver(settings))
    except InvalidObjectError as exc:
        click.echo(f"dra-operator driver: bad input: {exc}", err=True)
        sys.exit(_BAD_INPUT)
    except OSError as exc:
        click.echo(f"dra-operator driver: cannot start: {exc}", err=True)
        sys.exit(_CANNOT_START)
