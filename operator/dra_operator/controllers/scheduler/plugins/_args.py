"""Reading a plugin's `pluginConfig[].args`: raw JSON in, typed values out, clear errors.

Factories raise `PluginArgsError` naming the field path (`args.scoringStrategy.type`) and what
is accepted, so that a wrong configuration file fails at start-up with a readable message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class PluginArgsError(ValueError):
    """A plugin's args are malformed or hold a value the plugin does not accept."""


def check_known(args: Mapping[str, object], path: str, known: Sequence[str]) -> None:
    """Reject fields the plugin does not read: a misspelt field must not be ignored silently."""
    unknown = sorted(set(args) - set(known))
    if unknown:
        supported = ", ".join(known) if known else "none"
        raise PluginArgsError(
            f"{path}: unknown field(s) {', '.join(unknown)}; supported: {supported}"
        )


def as_mapping(value: object, path: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise PluginArgsError(f"{path}: expected an object, got {type(value).__name__}")
    return value


def as_list(value: object, path: str) -> Sequence[object]:
    if not isinstance(value, list | tuple):
        raise PluginArgsError(f"{path}: expected a list, got {type(value).__name__}")
    return value


def as_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise PluginArgsError(f"{path}: expected a string, got {type(value).__name__}")
    return value


def as_int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PluginArgsError(f"{path}: expected an integer, got {type(value).__name__}")
    return value


def str_list(args: Mapping[str, object], name: str, path: str) -> tuple[str, ...]:
    value = args.get(name)
    if value is None:
        return ()
    p = f"{path}.{name}"
    return tuple(as_str(v, f"{p}[{i}]") for i, v in enumerate(as_list(value, p)))
