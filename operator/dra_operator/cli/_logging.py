"""`--log-level` and `--log-format`, for the `dra-operator` group and for any command.

deploy/ runs `dra-operator run --log-level=info`, and a terminal user writes
`dra-operator --log-level debug demo`: both must work. So the options go on the group and on the
commands that want them, and logging is configured as each is invoked, the command's own values
winning over the group's (shared through `ctx.meta`) and the group's over the defaults. The
same values are not configured twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

if TYPE_CHECKING:
    from dra_operator.observability import LogFormat

__all__ = ["log_options"]

T = TypeVar("T")

_META_KEY = "dra_operator.logging"
_DEFAULT = ("info", "auto")


def log_options(command: Callable[..., T]) -> Callable[..., T]:
    """Add the two options to a click command or group; put it under `@click.command()`."""

    @click.option(
        "--log-level",
        default=None,
        show_default="info",
        envvar="DRA_OPERATOR_LOG_LEVEL",
        help="debug, info, warning, error or critical; applies to kopf and aiohttp too.",
    )
    @click.option(
        "--log-format",
        type=click.Choice(["auto", "json", "console"]),
        default=None,
        show_default="auto",
        envvar="DRA_OPERATOR_LOG_FORMAT",
        help="auto: JSON lines unless stderr is a terminal.",
    )
    @functools.wraps(command)
    def configured(*args: Any, log_level: str | None, log_format: str | None, **kwargs: Any) -> T:
        from dra_operator.observability import configure_logging  # --help never gets here

        ctx = click.get_current_context()
        current: tuple[str, str] | None = ctx.meta.get(_META_KEY)
        inherited = current or _DEFAULT
        wanted = (log_level or inherited[0], log_format or inherited[1])
        if wanted != current:
            try:
                configure_logging(wanted[0], cast("LogFormat", wanted[1]))
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--log-level") from exc
            ctx.meta[_META_KEY] = wanted
        return command(*args, **kwargs)

    return configured
