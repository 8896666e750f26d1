"""Command-line entry points: `dra-operator` and the kubectl plugin `kubectl-dra`.

Subcommands are imported lazily, so `dra-operator cel` does not pay for kopf and the
Kubernetes client, and each subcommand lives in its own module (`_<name>.py`, attribute
`command`).
"""

from __future__ import annotations

import importlib
from typing import Literal

import click

__all__ = ["kubectl_main", "main"]

# name -> module under dra_operator.cli that defines `command`
_SUBCOMMANDS: dict[str, str] = {
    "allocate": "_allocate",
    "cel": "_cel",
    "controlplane": "_controlplane",
    "demo": "_demo",
    "run": "_run",
    "verify": "_verify",
}
_KUBECTL_SUBCOMMANDS: dict[str, str] = {}


class _LazyGroup(click.Group):
    def __init__(self, *args: object, lazy: dict[str, str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy:
            module = importlib.import_module(f"{__name__}.{self._lazy[cmd_name]}")
            command: click.Command = module.command
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, lazy=_SUBCOMMANDS)
@click.version_option(package_name="dra-operator")
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    envvar="DRA_OPERATOR_LOG_LEVEL",
    help="debug, info, warning, error or critical; applies to kopf and aiohttp too.",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "json", "console"]),
    default="auto",
    show_default=True,
    envvar="DRA_OPERATOR_LOG_FORMAT",
    help="auto: JSON lines unless stderr is a terminal.",
)
def main(log_level: str, log_format: Literal["auto", "json", "console"]) -> None:
    """dra-operator: the Kubernetes DRA control plane."""
    from dra_operator.observability import configure_logging  # --help never gets here

    try:
        configure_logging(log_level, log_format)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--log-level") from exc


@click.group(cls=_LazyGroup, lazy=_KUBECTL_SUBCOMMANDS)
def kubectl_main() -> None:
    """kubectl dra: look into Dynamic Resource Allocation."""
