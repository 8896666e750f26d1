"""`dra-operator cel`: evaluate a device selector against the devices of ResourceSlice files.

The same engine, environment and texts the scheduler uses, so a selector can be tried before
it goes into a claim or class. v1alpha2 (1.30) slices are evaluated instead in 1.30's
named-resources environment (`attributes.<type>["name"]`, one row per instance, the node as
pool); one run takes one kind of slice, as one selector belongs to one environment. Exit
status: 0 when the expression compiled (even if some devices fail to evaluate), 2 on a compile
error, 1 on bad usage or unreadable files.
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
from dra_operator.model import v1alpha2

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


Slice = model.ResourceSlice | v1alpha2.ResourceSlice


def read_slices(paths: Sequence[str]) -> list[Slice]:
    """Every ResourceSlice in the files (YAML or JSON, several documents, or a List)."""
    slices: list[Slice] = []
    for path in paths:
        try:
            for index, document in enumerate(_documents(path)):
                if not isinstance(document, dict) or document.get("kind") != "ResourceSlice":
                    continue
                named = document.get("apiVersion") == v1alpha2.GROUP_VERSION
                try:
                    parsed = (v1alpha2.parse_object if named else model.parse_object)(document)
                except InvalidObjectError as exc:
                    raise click.ClickException(f"{path}: document {index}: {exc}") from None
                assert isinstance(parsed, model.ResourceSlice | v1alpha2.ResourceSlice)
                slices.append(parsed)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise click.ClickException(f"{path}: {exc}") from None
    kinds = {type(s) for s in slices}
    if len(kinds) > 1:
        raise _UsageError("v1alpha2 (1.30) slices cannot be mixed with newer ones in one run")
    return slices


def _row(
    driver: str, pool: str, device: str, selector: cel.CompiledSelector, view: Any
) -> dict[str, Any]:
    match: bool | None = None
    error: str | None = None
    try:
        match = selector.matches(view)
    except CELRuntimeError as exc:
        error = str(exc)
    return {"driver": driver, "pool": pool, "device": device, "match": match, "error": error}


def evaluate(selector: cel.CompiledSelector, slices: Sequence[Slice]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for s in slices:
        if isinstance(s, v1alpha2.ResourceSlice):
            for instance in s.instances or ():
                named = cel.named_view(instance)
                results.append(_row(s.driver_name, s.node_name, instance.name, selector, named))
            continue
        for device in s.devices:
            view = cel.device_view(s.driver, device)
            results.append(_row(s.driver, s.pool.name, device.name, selector, view))
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
    slices = read_slices(files)
    features = cel.CELFeatures(
        list_type_attributes=list_type_attributes,
        consumable_capacity=consumable_capacity,
        named_resources=any(isinstance(s, v1alpha2.ResourceSlice) for s in slices),
    )
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
