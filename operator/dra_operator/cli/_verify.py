"""`dra-operator verify`: check the cluster's DRA invariants; exit 0 only when they all hold.

Exit status: 0 when no error-level violation is found (warnings are printed but do not fail),
1 when at least one is, 2 when the cluster could not be read. The cluster is read twice and a
violation is reported only when both readings show it, so a change caught half-way between the
lists of claims and pods (the lists are not one atomic snapshot) does not count.
"""

from __future__ import annotations

import asyncio
import sys

import click
from rich.console import Console
from rich.table import Table

from dra_operator import verify
from dra_operator.cli._cluster_options import Target, cluster_options
from dra_operator.cli._output import output_option, print_document
from dra_operator.errors import APIError, InvalidObjectError
from dra_operator.kube import Client

__all__ = ["command"]

_OK, _VIOLATED, _UNREADABLE = 0, 1, 2
_PIPE_WIDTH = 160  # columns when printing to a file or pipe, where rich would assume 80


@click.command("verify")
@cluster_options
@click.option(
    "-n",
    "--namespace",
    default=None,
    help="Check only this namespace's claims and pods (slices and nodes are always read "
    "whole); a device double-allocated across namespaces then goes unseen.",
)
@click.option(
    "-A",
    "--all-namespaces",
    is_flag=True,
    help="Check every namespace (the default; wins over -n, as in kubectl).",
)
@output_option
def command(target: Target, namespace: str | None, all_namespaces: bool, output: str) -> None:
    """Check that no device is over-allocated and every claim and pod is consistent."""
    try:
        state, violations = asyncio.run(_verify(target, None if all_namespaces else namespace))
    except (APIError, InvalidObjectError, OSError) as exc:
        Console(stderr=True, soft_wrap=True).print(f"[red]cannot read the cluster:[/] {exc}")
        sys.exit(_UNREADABLE)
    if output in ("json", "yaml"):
        print_document(_as_json(state, violations), output)
    else:
        _print_table(state, violations)
    failed = any(v.severity == verify.Severity.ERROR for v in violations)
    sys.exit(_VIOLATED if failed else _OK)


async def _verify(
    target: Target, namespace: str | None
) -> tuple[verify.ClusterState, list[verify.Violation]]:
    async with Client(target.config()) as api:
        state = await verify.read_cluster(api, namespace=namespace, with_classes=True)
        violations = verify.check(state)
        if not violations:
            return state, violations
        seen = {(v.code, v.kind, v.name) for v in violations}
        state = await verify.read_cluster(api, namespace=namespace, with_classes=True)
        return state, [v for v in verify.check(state) if (v.code, v.kind, v.name) in seen]


def _counts(state: verify.ClusterState) -> dict[str, int]:
    return {
        "claims": len(state.claims),
        "slices": len(state.slices),
        "pods": len(state.pods),
        "nodes": len(state.nodes),
    }


def _as_json(state: verify.ClusterState, violations: list[verify.Violation]) -> dict[str, object]:
    return {
        "checked": _counts(state),
        "violations": [
            {
                "severity": str(v.severity),
                "code": str(v.code),
                "kind": v.kind,
                "name": v.name,
                "message": v.message,
            }
            for v in violations
        ],
    }


def _print_table(state: verify.ClusterState, violations: list[verify.Violation]) -> None:
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console.width = max(console.width, _PIPE_WIDTH)
    checked = ", ".join(f"{n} {what}" for what, n in _counts(state).items())
    if not violations:
        console.print(f"[green]No violations[/] (checked {checked}).")
        return
    table = Table()
    table.add_column("Code", no_wrap=True)
    table.add_column("Object", overflow="fold")
    table.add_column("Problem", overflow="fold", ratio=1)
    for v in violations:
        if v.severity == verify.Severity.ERROR:
            code = f"[red]{v.code}[/]"
        else:
            code = f"[yellow]{v.code}[/]\n({v.severity})"
        table.add_row(code, f"{v.kind}\n{v.name}", v.message)
    console.print(table)
    errors = sum(v.severity == verify.Severity.ERROR for v in violations)
    console.print(f"{errors} error(s), {len(violations) - errors} warning(s) (checked {checked}).")
