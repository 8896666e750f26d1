"""`-o/--output`, as kubectl spells it: a table by default, `wide`, `json` or `yaml`.

JSON and YAML print the same document; `wide` is the table with every column the command has.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click
import yaml

__all__ = ["FORMATS", "output_option", "print_document"]

T = TypeVar("T")

FORMATS = ("table", "wide", "json", "yaml")


def output_option(command: Callable[..., T]) -> Callable[..., T]:
    """Add `-o/--output` (passed as `output`)."""
    return click.option(
        "-o",
        "--output",
        type=click.Choice(FORMATS),
        default="table",
        show_default=True,
        help="table (the default), wide (more columns), json or yaml.",
    )(command)


def print_document(document: Any, output: str) -> None:
    """Print `document` as JSON or YAML (`output` is one of them)."""
    if output == "yaml":
        click.echo(yaml.safe_dump(document, sort_keys=False), nl=False)
    else:
        click.echo(json.dumps(document, indent=2))
