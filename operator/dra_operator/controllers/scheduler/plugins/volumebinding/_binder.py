"""Which of a pod's claims are bound, and how each node could satisfy the rest: pure.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/volumebinding/binder.go (with
component-helpers `storage/volume`): claims are sorted into bound ones, unbound ones whose
StorageClass waits for the first consumer, and unbound "immediate" ones (which the PV
controller, not the scheduler, binds); on a node, bound claims' PVs must accept the node, and
each waiting claim takes the smallest matching available PV or, failing that, is provisioned
dynamically where its StorageClass allows the node.

Not modelled: CSIStorageCapacity (a provision is never refused for lack of space, and
upstream's "node(s) did not have enough free storage" is never reported) and the translation
of in-tree PVs to CSI before the node-affinity check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from dra_operator import model
from dra_operator.controllers.scheduler.plugins.volumebinding._assume import AssumeCache
from dra_operator.model import (
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    Quantity,
    StorageClass,
)

REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

_SELECTED_NODE = model.VolumeAnnotation.SELECTED_NODE
_BOUND_BY_CONTROLLER = model.VolumeAnnotation.BOUND_BY_CONTROLLER

ClassLister = Callable[[str], StorageClass | None]


class BinderError(Exception):
    """What upstream returns as an error (the cycle fails with it), not a node's verdict."""


@dataclass(frozen=True, slots=True)
class Binding:
    """A claim to bind to a PV (`BindingInfo`); `pv` becomes the assumed PV in Reserve."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(frozen=True, slots=True)
class PodVolumes:
    """What a node needs done for the pod's waiting claims."""

    static_bindings: tuple[Binding, ...] = ()
    dynamic_provisions: tuple[PersistentVolumeClaim, ...] = ()


@dataclass(frozen=True, slots=True)
class PodVolumeClaims:
    bound: tuple[PersistentVolumeClaim, ...] = ()
    unbound_delay_binding: tuple[PersistentVolumeClaim, ...] = ()
    unbound_immediate: tuple[PersistentVolumeClaim, ...] = ()
    unbound_volumes: Mapping[str, Sequence[PersistentVolume]] | None = None  # by class


def claim_problem(
    pod: Pod, lookup: Callable[[str, str], PersistentVolumeClaim | None]
) -> tuple[bool, str | None]:
    """`podHasPVCs`: whether the pod uses claims, and why it cannot be scheduled, if so."""
    has = False
    namespace = pod.metadata.namespace
    for volume in pod.spec.volumes:
        name = model.volume_claim_name(pod.metadata.name, volume)
        if name is None:
            continue
        has = True
        pvc = lookup(namespace, name)
        if pvc is None:
            if volume.ephemeral:
                return has, (
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{name}"'
                )
            return has, f'persistentvolumeclaim "{name}" not found'
        if pvc.phase == "Lost":
            return has, (
                f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                f'"{pvc.volume_name}"'
            )
        if pvc.metadata.deletion_timestamp is not None:
            return has, f'persistentvolumeclaim "{name}" is being deleted'
        if volume.ephemeral and not model.claim_is_for_pod(pvc, namespace, pod.metadata.uid):
            return has, _not_for_pod(pvc, pod)
    return has, None


def _not_for_pod(pvc: PersistentVolumeClaim, pod: Pod) -> str:
    return (
        f"PVC {pvc.key} was not created for pod "
        f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
    )


def _delay_binding(pvc: PersistentVolumeClaim, classes: ClassLister) -> bool:
    """`IsDelayBindingMode`: no class or an unknown one binds immediately."""
    name = pvc.storage_class
    if not name:
        return False
    sc = classes(name)
    if sc is None:
        return False
    if sc.volume_binding_mode is None:
        raise BinderError(f'VolumeBindingMode not set for StorageClass "{name}"')
    return sc.volume_binding_mode == model.VolumeBindingMode.WAIT_FOR_FIRST_CONSUMER


def pod_volume_claims(pod: Pod, cache: AssumeCache, classes: ClassLister) -> PodVolumeClaims:
    """`GetPodVolumeClaims`, through the assume cache (a claim Reserve bound counts bound)."""
    bound: list[PersistentVolumeClaim] = []
    delay: list[PersistentVolumeClaim] = []
    immediate: list[PersistentVolumeClaim] = []
    for volume in pod.spec.volumes:
        pvc = claim_of(pod, volume, cache)
        if pvc is None:
            continue
        if pvc.fully_bound:
            bound.append(pvc)
        elif _delay_binding(pvc, classes) and not pvc.volume_name:
            delay.append(pvc)
        else:
            immediate.append(pvc)
    volumes = {pvc.storage_class: cache.pvs(pvc.storage_class) for pvc in delay}
    return PodVolumeClaims(tuple(bound), tuple(delay), tuple(immediate), volumes)


def claim_of(pod: Pod, volume: model.Volume, cache: AssumeCache) -> PersistentVolumeClaim | None:
    """`isVolumeBound`'s lookup: the volume's claim, None for a volume without one."""
    name = model.volume_claim_name(pod.metadata.name, volume)
    if name is None:
        return None
    namespace = pod.metadata.namespace
    pvc = cache.pvc(namespace, name)
    if pvc is None:
        raise BinderError(f'error getting PVC "{namespace}/{name}": not found')
    if volume.ephemeral and not model.claim_is_for_pod(pvc, namespace, pod.metadata.uid):
        raise BinderError(_not_for_pod(pvc, pod))
    return pvc


def find_pod_volumes(
    claims: PodVolumeClaims,
    node: model.Node,
    cache: AssumeCache,
    classes: ClassLister,
) -> tuple[PodVolumes, list[str]]:
    """`FindPodVolumes`: what the node needs done, or why it cannot serve the pod's claims."""
    bound_ok, pvs_found = _check_bound_claims(claims.bound, node, cache)
    unbound_ok = True
    statics: tuple[Binding, ...] = ()
    provisions: tuple[PersistentVolumeClaim, ...] = ()
    if claims.unbound_delay_binding:
        unbound_ok, statics, provisions = _check_unbound(claims, node, classes)
    reasons = []
    if not bound_ok:
        reasons.append(REASON_NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(REASON_BIND_CONFLICT)
    if not pvs_found:
        reasons.append(REASON_PV_NOT_EXIST)
    return PodVolumes(statics, provisions), reasons


def _check_bound_claims(
    bound: Sequence[PersistentVolumeClaim], node: model.Node, cache: AssumeCache
) -> tuple[bool, bool]:
    """(node affinity satisfied, every PV found); stops at the first failure, as upstream."""
    for pvc in bound:
        pv = cache.pv(pvc.volume_name)
        if pv is None:
            return True, False
        if not model.pv_node_affinity_matches(pv, node.labels):
            return False, True
    return True, True


def _check_unbound(
    claims: PodVolumeClaims, node: model.Node, classes: ClassLister
) -> tuple[bool, tuple[Binding, ...], tuple[PersistentVolumeClaim, ...]]:
    to_match: list[PersistentVolumeClaim] = []
    to_provision: list[PersistentVolumeClaim] = []
    for pvc in claims.unbound_delay_binding:
        selected = pvc.metadata.annotations.get(_SELECTED_NODE)
        if selected is None:
            to_match.append(pvc)
        elif selected != node.name:
            return False, (), ()
        else:
            to_provision.append(pvc)
    satisfied = True
    bindings: list[Binding] = []
    if to_match:
        satisfied, bindings, unmatched = _find_matching_volumes(
            to_match, claims.unbound_volumes or {}, node
        )
        to_provision.extend(unmatched)
    provisions: tuple[PersistentVolumeClaim, ...] = ()
    if to_provision:
        satisfied, provisions = _check_provisions(to_provision, node, classes)
    return satisfied, tuple(bindings), provisions


def _find_matching_volumes(
    to_match: list[PersistentVolumeClaim],
    volumes: Mapping[str, Sequence[PersistentVolume]],
    node: model.Node,
) -> tuple[bool, list[Binding], list[PersistentVolumeClaim]]:
    """Smallest claims first, each taking a PV no earlier claim of the pod took."""
    chosen: set[str] = set()
    bindings: list[Binding] = []
    unmatched: list[PersistentVolumeClaim] = []
    for pvc in sorted(to_match, key=lambda c: c.storage):  # stable, as upstream's small sort
        pv = find_matching_volume(pvc, volumes.get(pvc.storage_class, ()), node, chosen)
        if pv is None:
            unmatched.append(pvc)
            continue
        chosen.add(pv.name)
        bindings.append(Binding(pvc, pv))
    return not unmatched, bindings, unmatched


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    node: model.Node,
    excluded: set[str],
) -> PersistentVolume | None:
    """`FindMatchingVolume` with delayed binding on a node: a PV pre-bound to the claim wins
    (if the node suits it), else the smallest available PV that fits every condition."""
    selector = pvc.selector
    best: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not model.volume_bound_to_claim(pv, pvc):
            continue
        if pv.storage < pvc.storage or pv.volume_mode != pvc.volume_mode:
            continue
        if pv.volume_attributes_class_name != pvc.volume_attributes_class_name:
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = model.pv_node_affinity_matches(pv, node.labels)
        if model.volume_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if pv.phase != "Available":
            continue
        if selector is not None and not _selects(selector, pv, pvc):
            continue
        if pv.storage_class != pvc.storage_class or not affinity_ok:
            continue
        if not model.access_modes_satisfied(pvc, pv):
            continue
        if best is None or pv.storage < best.storage:
            best = pv
    return best


def _selects(
    selector: model.LabelSelector, pv: PersistentVolume, pvc: PersistentVolumeClaim
) -> bool:
    try:
        return model.compile_selector(selector).matches(pv.metadata.labels)
    except model.SelectorError as exc:
        raise BinderError(
            f"error creating internal label selector for claim: {pvc.key}: {exc}"
        ) from exc


def _check_provisions(
    to_provision: list[PersistentVolumeClaim], node: model.Node, classes: ClassLister
) -> tuple[bool, tuple[PersistentVolumeClaim, ...]]:
    """`checkVolumeProvisions`: each claim's class has a provisioner and allows the node."""
    for pvc in to_provision:
        name = pvc.storage_class
        if not name:
            raise BinderError(f'no class for claim "{pvc.key}"')
        sc = classes(name)
        if sc is None:
            raise BinderError(f'failed to find storage class "{name}"')
        if not sc.can_provision:
            return False, ()
        if not model.topology_matches(sc.allowed_topologies, node.labels):
            return False, ()
    return True, tuple(to_provision)


def bind_volume_to_claim(
    pv: PersistentVolume, pvc: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """`GetBindVolumeToClaim`: the PV with its claimRef on the claim, and whether it changed."""
    bound = model.volume_bound_to_claim(pv, pvc)
    meta = pvc.metadata
    ref = pv.claim_ref
    dirty = False
    if ref is None or (ref.name, ref.namespace, ref.uid) != (meta.name, meta.namespace, meta.uid):
        ref = model.ClaimReference(namespace=meta.namespace, name=meta.name, uid=meta.uid)
        dirty = True
    annotations = pv.metadata.annotations
    if not bound and _BOUND_BY_CONTROLLER not in annotations:
        annotations = model.FrozenMap(
            {**annotations, model.VolumeAnnotation.BOUND_BY_CONTROLLER: "yes"}
        )
        dirty = True
    return replace(pv, claim_ref=ref, metadata=replace(pv.metadata, annotations=annotations)), dirty


def with_selected_node(pvc: PersistentVolumeClaim, node_name: str) -> PersistentVolumeClaim:
    annotations = model.FrozenMap({**pvc.metadata.annotations, _SELECTED_NODE: node_name})
    return replace(pvc, metadata=replace(pvc.metadata, annotations=annotations))


def storage_bytes(quantity: Quantity) -> int:
    """`Quantity.Value()`: whole units, rounded up."""
    return quantity.int_value()
