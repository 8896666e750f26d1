"""`dra-operator allocate`: try structured-parameters allocation offline, without a cluster.

Reads manifests (DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates, Pods,
Nodes, DeviceTaintRules; any served API version, YAML or JSON, several documents or `kind: List`
per file). DeviceTaintRules add their taints to the devices they select, as the scheduler sees
them (`model.apply_taint_rules`). Claims that already carry an allocation count as in use.
Every other claim is allocated: a pod's claims together (claims from templates are named
`<pod>-<claim>`), on one node chosen among the candidates (the pod's `nodeName`, `--node`, the
Nodes given, or the nodes the slices name) by the policy's score, first node on ties; claims no
pod uses, one by one. Decisions are serial: each sees the devices of the ones before. Exit
status: 0 when everything was allocated, 3 when something could not be, 1 on bad input (with
the file and JSON path).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click
import yaml

from dra_operator.allocator import (
    Allocation,
    CELSelectors,
    Explanation,
    Features,
    Ledger,
    Node,
    Policy,
    allocate,
    policy_named,
)
from dra_operator.errors import AllocationInputError, HookLoadError, InvalidObjectError
from dra_operator.hooks import HookSet
from dra_operator.model import (
    AllocationResult,
    DeviceClass,
    DeviceTaintRule,
    ObjectMeta,
    Pod,
    ResourceClaim,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    ResourceSlice,
    apply_taint_rules,
    node_matches,
    parse_object,
    render_allocation_result,
)
from dra_operator.model import Node as NodeObject

EXIT_UNALLOCATED = 3
EXIT_BAD_INPUT = 1


@dataclass
class _Inputs:
    classes: list[DeviceClass]
    slices: list[ResourceSlice]
    claims: list[ResourceClaim]
    templates: dict[tuple[str, str], ResourceClaimTemplate]
    pods: list[Pod]
    nodes: list[Node]
    rules: list[DeviceTaintRule]


@dataclass
class _Outcome:
    claim: ResourceClaim
    pod: str | None
    node: str | None
    allocation: AllocationResult | None
    explanations: list[Explanation]
    error: str | None = None


def _documents(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, raw object) for every object in a file; `where` names file and document."""
    text = path.read_text()
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        raise InvalidObjectError("", f"not YAML or JSON: {err}", source=str(path)) from err
    for number, doc in enumerate(docs):
        if doc is None:
            continue
        where = f"{path}[{number}]" if len(docs) > 1 else str(path)
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List"):
            for i, item in enumerate(doc.get("items") or []):
                yield f"{where}.items[{i}]", item
        else:
            yield where, doc


# Kinds that commonly sit beside workloads in a manifest and play no part in allocation.
_IGNORED_KINDS = frozenset({"Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service"})


def _load(files: Sequence[str], features: Features) -> _Inputs:
    inputs = _Inputs([], [], [], {}, [], [], [])
    for name in files:
        for where, raw in _documents(Path(name)):
            if isinstance(raw, dict) and raw.get("kind") in _IGNORED_KINDS:
                continue
            try:
                obj = parse_object(raw)
            except InvalidObjectError as err:
                raise err.at(where) from err
            if isinstance(obj, DeviceClass):
                inputs.classes.append(obj)
            elif isinstance(obj, ResourceSlice):
                inputs.slices.append(obj)
            elif isinstance(obj, ResourceClaim):
                inputs.claims.append(obj)
            elif isinstance(obj, ResourceClaimTemplate):
                meta = obj.metadata
                inputs.templates[(meta.namespace or "default", meta.name)] = obj
            elif isinstance(obj, Pod):
                inputs.pods.append(obj)
            elif isinstance(obj, NodeObject):
                inputs.nodes.append(
                    Node(
                        name=obj.name,
                        labels=obj.labels,
                        declared_features=frozenset(obj.declared_features),
                    )
                )
            elif isinstance(obj, DeviceTaintRule):
                inputs.rules.append(obj)
    inputs.slices = apply_taint_rules(
        inputs.slices, inputs.rules, selectorless_matches_all=not features.since_137
    )
    return inputs


def _ns(meta: ObjectMeta) -> str:
    return meta.namespace or "default"


def _ref(meta: ObjectMeta) -> str:
    return f"{_ns(meta)}/{meta.name}"


def _units(inputs: _Inputs) -> list[tuple[Pod | None, list[ResourceClaim]]]:
    """What to allocate together: each pod's unallocated claims, then every other claim."""
    by_name = {(_ns(c.metadata), c.metadata.name): c for c in inputs.claims}
    used: set[tuple[str, str]] = set()
    units: list[tuple[Pod | None, list[ResourceClaim]]] = []
    for pod in inputs.pods:
        claims = []
        namespace = _ns(pod.metadata)
        for entry in pod.spec.resource_claims:
            if entry.resource_claim_name:
                key = (namespace, entry.resource_claim_name)
                if key not in by_name:
                    raise AllocationInputError(
                        f"pod {_ref(pod.metadata)}: resource claim {entry.resource_claim_name} "
                        "not found in the manifests"
                    )
                used.add(key)
                claim = by_name[key]
            elif entry.resource_claim_template_name:
                template = inputs.templates.get((namespace, entry.resource_claim_template_name))
                if template is None:
                    raise AllocationInputError(
                        f"pod {_ref(pod.metadata)}: resource claim template "
                        f"{entry.resource_claim_template_name} not found in the manifests"
                    )
                meta = ObjectMeta(name=f"{pod.metadata.name}-{entry.name}", namespace=namespace)
                claim = ResourceClaim(metadata=meta, spec=template.spec)
            else:
                continue
            if claim.status.allocation is None:
                claims.append(claim)
        if claims:
            units.append((pod, claims))
    for claim in inputs.claims:
        key = (_ns(claim.metadata), claim.metadata.name)
        if key not in used and claim.status.allocation is None:
            units.append((None, [claim]))
    return units


def _candidate_nodes(inputs: _Inputs, pod: Pod | None, node: str | None) -> list[Node]:
    known = {n.name: n for n in inputs.nodes}
    wanted = (pod.spec.node_name if pod is not None else "") or node
    if wanted:
        return [known.get(wanted, Node(name=wanted))]
    if inputs.nodes:
        nodes = sorted(inputs.nodes, key=lambda n: n.name)
        return [n for n in nodes if pod is None or _pod_admits(pod, n)]
    names = sorted({s.node_name for s in inputs.slices if s.node_name})
    return [Node(name=name) for name in names] or [Node(name="node")]


def _pod_admits(pod: Pod, node: Node) -> bool:
    """The pod's nodeSelector and required node affinity, as the scheduler filters nodes."""
    if any(node.labels.get(key) != value for key, value in pod.spec.node_selector.items()):
        return False
    affinity = pod.spec.required_node_affinity
    return affinity is None or node_matches(node.name, node.labels, affinity)


def _allocate_unit(
    inputs: _Inputs,
    claims: list[ResourceClaim],
    nodes: list[Node],
    allocated: list[ResourceClaim],
    features: Features,
    policy: Policy,
    selectors: CELSelectors,
) -> tuple[Node | None, Allocation | None, list[Explanation]]:
    ledger = Ledger.from_claims(allocated, consumable_capacity=features.consumable_capacity)
    best: tuple[float, int, Node, Allocation] | None = None
    explanations = []
    for order, node in enumerate(nodes):
        got = allocate(
            claims,
            classes=inputs.classes,
            slices=inputs.slices,
            node=node,
            features=features,
            selectors=selectors,
            ledger=ledger,
            policy=policy,
        )
        if got.results is None:
            assert got.explanation is not None
            explanations.append(got.explanation)
            continue
        score = got.score
        if best is None or (score, -order) > (best[0], -best[1]):
            best = (score, order, node, got)
        if policy.name == "FirstFit":
            break
    if best is None:
        return None, None, explanations
    return best[2], best[3], []


def _run(
    files: Sequence[str], node: str | None, policy: Policy, features: Features
) -> list[_Outcome]:
    inputs = _load(files, features)
    allocated = [c for c in inputs.claims if c.status.allocation is not None]
    selectors = CELSelectors(features)
    outcomes = []
    # Claims this run allocated, by (namespace, name): a shared claim is allocated for its first
    # consumer; later consumers reuse that allocation and must land on a node it admits.
    done: dict[tuple[str, str], tuple[AllocationResult, str | None]] = {}
    for pod, wanted in _units(inputs):
        pod_ref = _ref(pod.metadata) if pod is not None else None
        reused = [c for c in wanted if _key(c) in done]
        claims = [c for c in wanted if _key(c) not in done]
        candidates = [
            n
            for n in _candidate_nodes(inputs, pod, node)
            if all(_admits(done[_key(c)][0], n) for c in reused)
        ]
        if not claims:
            chosen_name = candidates[0].name if candidates else None
            for claim in reused:
                result = done[_key(claim)][0] if chosen_name else None
                outcomes.append(_Outcome(claim, pod_ref, chosen_name, result, []))
            continue
        try:
            chosen, got, explanations = _allocate_unit(
                inputs, claims, candidates, allocated, features, policy, selectors
            )
        except AllocationInputError as err:
            outcomes += [_Outcome(c, pod_ref, None, None, [], str(err)) for c in claims]
            continue
        if got is None or got.results is None:
            outcomes += [_Outcome(c, pod_ref, None, None, explanations) for c in claims]
            continue
        node_name = chosen.name if chosen else None
        for claim, result in zip(claims, got.results, strict=True):
            allocated.append(replace(claim, status=ResourceClaimStatus(allocation=result)))
            done[_key(claim)] = (result, node_name)
            outcomes.append(_Outcome(claim, pod_ref, node_name, result, []))
        for claim in reused:
            outcomes.append(_Outcome(claim, pod_ref, node_name, done[_key(claim)][0], []))
    return outcomes


def _key(claim: ResourceClaim) -> tuple[str, str]:
    return _ns(claim.metadata), claim.metadata.name


def _admits(allocation: AllocationResult, node: Node) -> bool:
    selector = allocation.node_selector
    return selector is None or node_matches(node.name, node.labels, selector)


def _json(outcomes: Sequence[_Outcome]) -> dict[str, Any]:
    return {
        "claims": [
            {
                "claim": _ref(o.claim.metadata),
                "pod": o.pod,
                "allocated": o.allocation is not None,
                "node": o.node,
                "allocation": render_allocation_result(o.allocation) if o.allocation else None,
                "error": o.error,
                "explanations": [
                    {"node": e.node, "summary": e.summary, "lines": e.lines()}
                    for e in o.explanations
                ],
            }
            for o in outcomes
        ],
        "allocated": sum(1 for o in outcomes if o.allocation is not None),
        "unallocated": sum(1 for o in outcomes if o.allocation is None),
    }


def _table(outcomes: Sequence[_Outcome]) -> str:
    lines = []
    for o in outcomes:
        head = f"claim {_ref(o.claim.metadata)}" + (f" (pod {o.pod})" if o.pod else "")
        if o.allocation is not None:
            lines.append(f"{head}: allocated on node {o.node}")
            for r in o.allocation.devices.results:
                lines.append(f"  {r.request}: {r.driver}/{r.pool}/{r.device}")
            for c in o.allocation.devices.config:
                driver = c.opaque.driver if c.opaque else ""
                target = ",".join(c.requests) or "all requests"
                lines.append(f"  config {c.source.value} for {target}: {driver}")
        elif o.error is not None:
            lines.append(f"{head}: error: {o.error}")
        else:
            lines.append(f"{head}: not allocated")
            for e in o.explanations:
                lines.append(f"  node {e.node}: {e.summary}")
                lines.extend(f"    {line}" for line in e.lines()[1:])
    return "\n".join(lines)


@click.command("allocate")
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Manifest file (repeatable).",
)
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table")
@click.option("--node", default=None, help="Allocate on this node only.")
@click.option(
    "--policy",
    default="FirstFit",
    help="FirstFit (upstream's choice), BinPack, Spread or TopologyAffinity=<attribute>.",
)
@click.option(
    "--kubernetes-version",
    default="1.37",
    help="Mimic the default feature gates of this release [default: 1.37].",
)
@click.option(
    "--hook",
    "hook_specs",
    multiple=True,
    help="Run this hook (module:attr, repeatable; docs/hooks.md) around the policy.",
)
def command(
    files: tuple[str, ...],
    output: str,
    node: str | None,
    policy: str,
    kubernetes_version: str,
    hook_specs: tuple[str, ...],
) -> None:
    """Allocate the claims in FILE(s) offline and print allocations or explanations."""
    name, _, attribute = policy.partition("=")
    try:
        chosen = policy_named(name, attribute=attribute)
        if hook_specs:
            chosen = HookSet.load(hook_specs, use_entry_points=False).policy(chosen)
        features = Features.for_kubernetes(kubernetes_version)
        outcomes = _run(files, node, chosen, features)
    except (InvalidObjectError, AllocationInputError, HookLoadError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if output == "json":
        click.echo(json.dumps(_json(outcomes), indent=2))
    else:
        click.echo(_table(outcomes))
    if any(o.allocation is None for o in outcomes):
        sys.exit(EXIT_UNALLOCATED)
