"""`dra-operator explain pod|claim NAME` (also `kubectl dra explain`): why no devices, or which.

Reads the cluster as `verify` does (plus DeviceClasses and DeviceTaintRules, and the
AllocationPolicies with the namespace's labels when the CRD is installed), runs the allocator
in explain mode as the scheduler would (see `_diagnose`) and prints which policy governed the
attempt and, per candidate node and request, the funnel of devices and the stage that blocks;
for a pod, also the devices a preemption nominated to it (its `DevicesNominated` condition).
Exit status: 0 when everything is allocated, 3 when something is not (explained), 1 when the
object does not exist, 2 when the cluster could not be read.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Mapping

import click

from dra_operator import verify
from dra_operator.allocator import Features
from dra_operator.cli._cluster_options import Target, cluster_options
from dra_operator.cli._completion import complete_names
from dra_operator.cli._diagnose import Diagnosis, Policies, diagnose_claim, diagnose_pod
from dra_operator.cli._output import output_option, print_document
from dra_operator.controllers.scheduler import DEVICES_NOMINATED
from dra_operator.errors import APIError, APINotFoundError, InvalidObjectError
from dra_operator.hooks import parse_allocation_policy
from dra_operator.kube import ALLOCATION_POLICIES, NAMESPACES, Client, ClusterConfig
from dra_operator.model import PodGroup

__all__ = ["command"]

_OK, _MISSING, _UNREADABLE, _UNALLOCATED = 0, 1, 2, 3


async def _read(config: ClusterConfig, namespace: str) -> tuple[verify.ClusterState, Policies]:
    async with Client(config) as api:
        state = await verify.read_cluster(api, namespace=namespace, with_classes=True)
        return state, await _policies(api, namespace)


async def _policies(api: Client, namespace: str) -> Policies:
    """The AllocationPolicies, when their CRD is installed, and the namespace's labels."""
    group, version = ALLOCATION_POLICIES.group, ALLOCATION_POLICIES.version
    if version not in await api.served_versions(group):
        return Policies()
    served = await api.api_resources(group, version)
    if not any(r.get("name") == ALLOCATION_POLICIES.plural for r in served):
        return Policies()
    raws = (await api.list(ALLOCATION_POLICIES)).get("items") or []
    policies = tuple(parse_allocation_policy(raw) for raw in raws)
    labels: dict[str, dict[str, str]] = {}
    if policies:
        try:
            raw = await api.get(NAMESPACES, namespace)
        except APINotFoundError:
            raw = {}
        found = (raw.get("metadata") or {}).get("labels") or {}
        labels[namespace] = {str(k): str(v) for k, v in found.items()}
    return Policies(policies=policies, namespace_labels=labels)


def _policy_line(found: Diagnosis) -> list[str]:
    if not found.strategy:
        return []
    if not found.policy:
        return [f"  policy: no AllocationPolicy governs (strategy {found.strategy})"]
    line = f"  policy: AllocationPolicy {found.policy} (strategy {found.strategy})"
    if found.hooks_not_run:
        line += f"; its hooks are not run by explain: {', '.join(found.hooks_not_run)}"
    return [line]


def group_reservations(state: verify.ClusterState, namespace: str) -> dict[str, str]:
    """`namespace/claim` -> the PodGroup it is reserved for (DRAWorkloadResourceClaims: the
    group's pods share it, none is named in `reservedFor`)."""
    return {
        f"{namespace}/{claim.metadata.name}": ref.name
        for claim in state.claims
        if claim.metadata.namespace == namespace
        for ref in claim.status.reserved_for
        if ref.api_group == PodGroup.API_GROUP and ref.resource == PodGroup.PLURAL
    }


def nomination_lines(state: verify.ClusterState, namespace: str, name: str) -> list[str]:
    """The pod's `DevicesNominated` condition: the devices a preemption nominated to it
    (KEP-5690), or that the nomination expired."""
    for pod in state.pods:
        if (pod.metadata.namespace, pod.metadata.name) != (namespace, name):
            continue
        return [
            f"devices nominated by preemption ({c.reason}): {c.message}"
            if c.status == "True"
            else f"device nomination ended ({c.reason}): {c.message}"
            for c in pod.status.conditions
            if c.type == DEVICES_NOMINATED
        ]
    return []


def _table(found: Diagnosis, *, wide: bool = False, groups: Mapping[str, str] | None = None) -> str:
    lines = [f"extended resource {line}" for line in found.extended]
    for claim in found.allocated:
        lines.append(f"claim {claim.claim}: allocated on node {claim.node}")
        if groups and claim.claim in groups:
            lines.append(f"  reserved for PodGroup {groups[claim.claim]}, shared by its pods")
        lines += [f"  {device}" for device in claim.devices]
    for name in found.missing:
        lines.append(f"claim {name}: does not exist yet (the claims controller creates it)")
    for name in found.classic:
        lines.append(
            f"claim {name}: allocated by that classic driver, for the node selected in the "
            "pod's PodSchedulingContext (docs/classic.md)"
        )
    for name in found.named:
        lines.append(
            f"claim {name}: 1.30 named resources, allocated by the scheduler; explain does not "
            "run 1.30's allocator: the pod's FailedScheduling event says why it waits"
        )
    if found.pending:
        lines.append(f"not allocated: {', '.join(found.pending)}")
        lines += _policy_line(found)
    if found.error:
        lines.append(f"  error: {found.error}")
    for verdict in found.nodes:
        if verdict.fits:
            lines.append(f"  node {verdict.node}: {verdict.summary}")
            continue
        lines.append(f"  node {verdict.node}: {verdict.summary}")
        if verdict.plugin:
            lines.append(f"    rejected by the {verdict.plugin} Filter")
        for request in verdict.requests:
            need = f"{request.needed} needed" if request.needed else "all needed"
            steps = " → ".join(f"{s.name} {s.remaining}" for s in request.stages)
            lines.append(
                f"    claim {request.claim}, request {request.request} ({need}): "
                f"considered {request.considered} → {steps}"
            )
            if request.blocking:
                lines.append(f"      blocked at {request.blocking}")
            if wide:
                lines += [
                    f"      {stage.name}: {dropped}"
                    for stage in request.stages
                    for dropped in stage.dropped
                ]
        lines += [f"    {pool}" for pool in verdict.pools]
    if found.is_allocated:
        lines.append(f"{found.subject}: every claim is allocated")
    return "\n".join(lines)


@click.command("explain")
@click.argument("kind", type=click.Choice(["pod", "claim"]))
@click.argument("name", shell_complete=complete_names)
@click.option(
    "-n", "--namespace", default=None, help="[default: the context's namespace, else default]"
)
@output_option
@cluster_options
@click.option(
    "--kubernetes-version",
    default="1.37",
    show_default=True,
    help="Mimic the default feature gates of this release.",
)
def command(
    kind: str,
    name: str,
    namespace: str | None,
    output: str,
    target: Target,
    kubernetes_version: str,
) -> None:
    """Explain why a pod's or claim's devices are (not) allocated."""
    try:
        features = Features.for_kubernetes(kubernetes_version)
        config = target.config()
        namespace = namespace or config.namespace or "default"
        state, policies = asyncio.run(_read(config, namespace))
    except (APIError, InvalidObjectError, OSError) as exc:
        click.echo(f"cannot read the cluster: {exc}", err=True)
        sys.exit(_UNREADABLE)
    diagnose = diagnose_pod if kind == "pod" else diagnose_claim
    found = diagnose(state, namespace, name, features, policies)
    if found is None:
        click.echo(f"{kind} {namespace}/{name} not found", err=True)
        sys.exit(_MISSING)
    if output in ("json", "yaml"):
        print_document(dataclasses.asdict(found) | {"is_allocated": found.is_allocated}, output)
    else:
        groups = group_reservations(state, namespace)
        table = _table(found, wide=output == "wide", groups=groups)
        extra = nomination_lines(state, namespace, name) if kind == "pod" else []
        click.echo("\n".join([table, *extra]) if extra else table)
    sys.exit(_OK if found.is_allocated else _UNALLOCATED)
