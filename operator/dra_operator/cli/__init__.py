"""Command-line entry points: `dra-operator` and the kubectl plugin `kubectl-dra`.

Subcommands are imported lazily, so `dra-operator cel` does not pay for kopf and the
Kubernetes client, and each subcommand lives in its own module (`_<name>.py`, attribute
`command`).
"""

from __future__ import annotations

import importlib

import click

from dra_operator.cli._logging import log_options

__all__ = ["kubectl_complete_main", "kubectl_main", "main"]

# name -> module under dra_operator.cli that defines `command`
_SUBCOMMANDS: dict[str, str] = {
    "allocate": "_allocate",
    "cel": "_cel",
    "classic-driver": "_classic_driver",
    "completion": "_completion",
    "controlplane": "_controlplane",
    "demo": "_demo",
    "driver": "_driver",
    "explain": "_explain",
    "run": "_run",
    "taint": "_taint",
    "untaint": "_untaint",
    "verify": "_verify",
}
_KUBECTL_SUBCOMMANDS: dict[str, str] = {
    "completion": "_completion",
    "devices": "_devices",
    "explain": "_explain",
}


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
@log_options
def main() -> None:
    """dra-operator: the Kubernetes DRA control plane."""


@click.group(cls=_LazyGroup, lazy=_KUBECTL_SUBCOMMANDS)
def kubectl_main() -> None:
    """kubectl dra: look into Dynamic Resource Allocation."""


def kubectl_complete_main() -> None:
    """`kubectl_complete-dra`: the candidates kubectl asks a plugin for on <TAB>."""
    import sys

    from dra_operator.cli._completion import kubectl_complete

    kubectl_complete(kubectl_main, "kubectl-dra", sys.argv[1:])
