"""`--kubeconfig` and `--context`, as kubectl spells them: which cluster and identity to use.

Every command that talks to a cluster takes both and receives a `Target`; loading (and running
an exec credential plugin) happens when the command asks, so `--help` never does.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from dra_operator import kube

__all__ = ["Target", "cluster_options", "kubeconfig_option"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Target:
    """The kubeconfig and context a command was given (None: kubectl's defaults)."""

    kubeconfig: Path | None = None
    context: str | None = None

    def config(self) -> kube.ClusterConfig:
        """Connection settings; raises InvalidObjectError when they cannot be loaded."""
        return kube.load_config(self.kubeconfig, context=self.context)


kubeconfig_option = click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Kubeconfig to use [default: $KUBECONFIG, in-cluster, ~/.kube/config].",
)
"""`--kubeconfig` alone, as `kubeconfig: Path | None`: for the drivers, which take no context."""


def cluster_options(command: Callable[..., T]) -> Callable[..., T]:
    """Add `--kubeconfig` and `--context`; the command gets them as `target: Target`."""

    @kubeconfig_option
    @click.option("--context", default=None, help="The kubeconfig context to use.")
    @functools.wraps(command)
    def wrapped(*args: Any, kubeconfig: Path | None, context: str | None, **kwargs: Any) -> T:
        return command(*args, target=Target(kubeconfig, context), **kwargs)

    return wrapped
