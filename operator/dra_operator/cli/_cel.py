"""`dra-operator cel`: evaluate a device selector against the devices of ResourceSlice files.

The same engine, environment and texts the scheduler uses, so a selector can be tried before
it goes into a claim or class. Exit status: 0 when the expression compiled (even if some
devices fail to evaluate), 2 on a compile error, 1 on bad usage or unreadable files.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

from dra_operator import cel, model
from dra_operator.errors import CELCompileError, CELRuntimeError, InvalidObjectError

EXIT_COMPILE_ERROR = 2
EXIT_BAD_INPUT = 1


class _UsageError(click.UsageError):
    exit_code = EXIT_BAD_INPUT


class _Command(click.Command):
    """Usage errors exit 1 here (click's default is 2, which this command uses for CEL)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _UsageError(exc.format_message(), exc.ctx) from None


def _documents(path: str) -> Iterator[Any]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    for document in yaml.safe_load_all(text):
        if isinstance(document, dict) and document.get("kind", "").endswith("List"):
            yield from document.get("items") or []
        elif document is not None:
            yield document


def read_slices(paths: Sequence[str]) -> list[model.ResourceSlice]:
    """Every ResourceSlice in the files (YAML or JSON, several documents, or a List)."""
    slices: list[model.ResourceSlice] = []
    for path in paths:
        try:
            for index, document in enumerate(_documents(path)):
                if not isinstance(document, dict) or document.get("kind") != "ResourceSlice":
                    continue
                try:
                    parsed = model.parse_object(document)
                except InvalidObjectError as exc:
                    raise click.ClickException(f"{path}: document {index}: {exc}") from None
                assert isinstance(parsed, model.ResourceSlice)
                slices.append(parsed)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise click.ClickException(f"{path}: {exc}") from None
    return slices


def evaluate(
    selector: cel.CompiledSelector, slices: Sequence[model.ResourceSlice]
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for resource_slice in slices:
        for device in resource_slice.devices:
            view = cel.device_view(resource_slice.driver, device)
            match: bool | None = None
            error: str | None = None
            try:
                match = selector.matches(view)
            except CELRuntimeError as exc:
                error = str(exc)
            results.append(
                {
                    "driver": resource_slice.driver,
                    "pool": resource_slice.pool.name,
                    "device": device.name,
                    "match": match,
                    "error": error,
                }
            )
    return results


def _print_table(expression: str, results: list[dict[str, Any]]) -> None:
    table = Table(title=expression, title_justify="left")
    for column in ("driver", "pool", "device", "match", "error"):
        table.add_column(column, overflow="fold")
    for row in results:
        match = "" if row["match"] is None else ("true" if row["match"] else "false")
        table.add_row(row["driver"], row["pool"], row["device"], match, row["error"] or "")
    Console().print(table)


@click.command(cls=_Command, name="cel")
@click.option("-e", "--expression", required=True, help="The CEL device selector.")
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    help="A file with ResourceSlices (YAML or JSON, any served version); '-' reads stdin.",
)
@click.option(
    "-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option("--list-type-attributes", is_flag=True, help="Enable DRAListTypeAttributes.")
@click.option("--consumable-capacity", is_flag=True, help="Enable DRAConsumableCapacity.")
def command(
    expression: str,
    files: tuple[str, ...],
    output: str,
    list_type_attributes: bool,
    consumable_capacity: bool,
) -> None:
    """Compile EXPRESSION and evaluate it against every device in the given ResourceSlices."""
    features = cel.CELFeatures(
        list_type_attributes=list_type_attributes, consumable_capacity=consumable_capacity
    )
    slices = read_slices(files)
    try:
        selector = cel.compile_selector(expression, features=features)
    except CELCompileError as exc:
        if output == "json":
            click.echo(
                json.dumps({"expression": expression, "compileError": str(exc), "results": []})
            )
        else:
            click.echo(f"CEL compile error: {exc}", err=True)
        sys.exit(EXIT_COMPILE_ERROR)
    results = evaluate(selector, slices)
    if output == "json":
        document = {"expression": expression, "compileError": None, "results": results}
        click.echo(json.dumps(document, indent=2))
    else:
        _print_table(expression, results)
