"""`dra-operator taint` / `untaint`: put a device taint on or off, as an admin or a driver would.

Two ways exist upstream (upstream-dra.md §5.1-5.2): a taint in the device's ResourceSlice entry
(what a driver publishes), or a DeviceTaintRule (cluster-scoped, served only where the
DRADeviceTaintRules gate is on: v1alpha3 1.33-1.35, v1beta2 1.36, v1 1.37). `--via auto` takes
a rule when the server serves the kind, else the slice. Slice edits are PUTs preconditioned on
the resourceVersion, so a driver's concurrent republish is never overwritten silently.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import hashlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

import click

from dra_operator import names
from dra_operator.cli._cluster_options import cluster_options
from dra_operator.errors import APIError, InvalidObjectError
from dra_operator.kube import RESOURCE_GROUP, Client, Resource, dra

_VERSIONS = ("v1", "v1beta2", "v1alpha3")
_EFFECTS = ("NoExecute", "NoSchedule", "None")


def _stamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rule_name(driver: str, pool: str, device: str | None, key: str) -> str:
    """A stable default name, so `untaint` finds what `taint` made without being told."""
    digest = hashlib.sha256(f"{driver}/{pool}/{device or ''}/{key}".encode()).hexdigest()[:10]
    return f"dra-taint-{digest}"


def rule_manifest(
    api_version: str,
    name: str,
    selector: Mapping[str, str],
    taint: Mapping[str, str],
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "dra-operator"}},
        "spec": {"deviceSelector": dict(selector), "taint": dict(taint)},
    }


def taint_slice(
    raw: Mapping[str, Any], device: str | None, taint: Mapping[str, str]
) -> dict[str, Any] | None:
    """The slice with `taint` on the device (all devices when None); None if nothing changed.

    A taint with the same key and effect is replaced (value and time are the new ones).
    """
    body = copy.deepcopy(dict(raw))
    changed = False
    for entry in body.get("spec", {}).get("devices") or []:
        if device is not None and entry.get("name") != device:
            continue
        taints = [
            t
            for t in entry.get("taints") or []
            if (t.get("key"), t.get("effect")) != (taint["key"], taint["effect"])
        ]
        entry["taints"] = [*taints, dict(taint)]
        changed = True
    return body if changed else None


def untaint_slice(
    raw: Mapping[str, Any], device: str | None, key: str, effect: str | None
) -> dict[str, Any] | None:
    """The slice without taints of `key` (and `effect`, if given); None if none was there."""
    body = copy.deepcopy(dict(raw))
    changed = False
    for entry in body.get("spec", {}).get("devices") or []:
        if device is not None and entry.get("name") != device:
            continue
        kept = [
            t
            for t in entry.get("taints") or []
            if t.get("key") != key or (effect is not None and t.get("effect") != effect)
        ]
        if len(kept) != len(entry.get("taints") or []):
            changed = True
            if kept:
                entry["taints"] = kept
            else:
                entry.pop("taints")
    return body if changed else None


async def _served(api: Client, plural: str) -> Resource | None:
    for version in _VERSIONS:
        try:
            resources = await api.api_resources(RESOURCE_GROUP, version)
        except APIError:
            continue
        if any(r.get("name") == plural for r in resources):
            return dra(plural, version)
    return None


async def _pool_slices(api: Client, slices: Resource, driver: str, pool: str) -> list[Any]:
    found = (await api.list(slices, field_selector=f"spec.driver={driver}")).get("items") or []
    mine = [s for s in found if s["spec"]["pool"]["name"] == pool]
    newest = max((s["spec"]["pool"]["generation"] for s in mine), default=0)
    return [s for s in mine if s["spec"]["pool"]["generation"] == newest]


async def change_taint(options: Mapping[str, Any], *, add: bool) -> str:
    """Put the taint on (`add`) or off as `options` (the command line's) say; what was done."""
    async with Client(options["target"].config()) as api:
        rules = await _served(api, "devicetaintrules")
        via = options["via"]
        if via == "auto":
            via = "rule" if rules is not None else "slice"
        driver, pool, device, key = (options[k] for k in ("driver", "pool", "device", "key"))
        if via == "rule":
            if rules is None:
                raise click.ClickException("the server does not serve DeviceTaintRule")
            name = options["name"] or rule_name(driver, pool, device, key)
            if not add:
                await api.delete(rules, name)
                return f"devicetaintrule/{name} deleted"
            selector = {"driver": driver, "pool": pool, **({"device": device} if device else {})}
            taint = {"key": key, "value": options["value"], "effect": options["effect"]}
            body = rule_manifest(rules.api_version, name, selector, taint)
            await api.create(rules, body, field_manager=names.OPERATOR_FIELD_MANAGER)
            return f"devicetaintrule/{name} created"
        slices = await _served(api, "resourceslices")
        if slices is None or slices.version not in ("v1", "v1beta2"):
            raise click.ClickException("the server serves no ResourceSlice version with taints")
        done: list[str] = []
        now = datetime.datetime.now(datetime.UTC)
        for raw in await _pool_slices(api, slices, driver, pool):
            if add:
                taint = {
                    "key": key,
                    "value": options["value"],
                    "effect": options["effect"],
                    "timeAdded": _stamp(now),
                }
                edited = taint_slice(raw, device, taint)
            else:
                edited = untaint_slice(raw, device, key, options["effect_filter"])
            if edited is not None:
                await api.update(slices, edited, field_manager=names.OPERATOR_FIELD_MANAGER)
                done.append(raw["metadata"]["name"])
        if not done:
            raise click.ClickException(f"no device of pool {driver}/{pool} matched")
        verb = "tainted" if add else "untainted"
        return "\n".join(f"resourceslice/{n} {verb}" for n in done)


def _common(func: Any) -> Any:
    options: list[Callable[[Any], Any]] = [
        cluster_options,
        click.option("--driver", required=True, help="The device's driver."),
        click.option("--pool", required=True, help="The device's pool."),
        click.option("--device", default=None, help="The device; all of the pool if not set."),
        click.option("--key", required=True, help="The taint's key."),
        click.option(
            "--via",
            type=click.Choice(["auto", "slice", "rule"]),
            default="auto",
            show_default=True,
            help="auto: a DeviceTaintRule when the server serves them, else the slice.",
        ),
        click.option("--name", default=None, help="The DeviceTaintRule's name [default: derived]."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _finish(coro: Any) -> None:
    try:
        click.echo(asyncio.run(coro))
    except (APIError, InvalidObjectError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


@click.command("taint")
@_common
@click.option("--value", default="", help="The taint's value.")
@click.option("--effect", type=click.Choice(_EFFECTS), default="NoExecute", show_default=True)
def command(**options: Any) -> None:
    """Taint a device (or a pool) through its ResourceSlice or a DeviceTaintRule."""
    _finish(change_taint(options, add=True))


@click.command("untaint")
@_common
@click.option(
    "--effect",
    "effect_filter",
    type=click.Choice(_EFFECTS),
    default=None,
    help="Remove only taints with this effect (slice only) [default: any].",
)
def untaint(**options: Any) -> None:
    """Remove a taint that `taint` put on (deletes the DeviceTaintRule, or edits the slice)."""
    _finish(change_taint(options, add=False))
