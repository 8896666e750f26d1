"""Pod volumes, PV, PVC, StorageClass, CSINode and CSIDriver parsing and the storage predicates.

Covers every field the volume plugins read, the claim a volume names (ephemeral `<pod>-<volume>`),
the beta storage-class annotation, a claim's label selector, topology terms, claimRef matching
with and without a UID, PV node affinity and access modes.
"""

from typing import Any

from dra_operator.model import (
    ClaimReference,
    FrozenMap,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    Quantity,
    TopologySelectorRequirement,
    TopologySelectorTerm,
    access_modes_satisfied,
    claim_is_for_pod,
    compile_selector,
    parse_csi_driver,
    parse_csi_node,
    parse_persistent_volume,
    parse_persistent_volume_claim,
    parse_pod,
    parse_storage_class,
    pv_node_affinity_matches,
    topology_matches,
    volume_bound_to_claim,
    volume_claim_name,
)


def _pod(volumes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"containers": [{"name": "c"}], "volumes": volumes},
    }


def test_pod_volumes_keep_claims_and_inline_disks() -> None:
    pod = parse_pod(
        _pod(
            [
                {"name": "data", "persistentVolumeClaim": {"claimName": "pvc-1"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                {"name": "gce", "gcePersistentDisk": {"pdName": "pd", "readOnly": True}},
                {"name": "aws", "awsElasticBlockStore": {"volumeID": "vol-1"}},
                {"name": "rbd", "rbd": {"monitors": ["a", "b"], "image": "img"}},
                {"name": "iscsi", "iscsi": {"iqn": "iqn.1", "targetPortal": "p", "lun": 0}},
                {"name": "cfg", "configMap": {"name": "x"}},
            ]
        )
    )
    data, scratch, gce, aws, rbd, iscsi, cfg = pod.spec.volumes
    assert volume_claim_name("web", data) == "pvc-1"
    assert volume_claim_name("web", scratch) == "web-scratch"
    assert volume_claim_name("web", cfg) is None
    assert gce.gce_persistent_disk is not None and gce.gce_persistent_disk.read_only
    assert aws.aws_elastic_block_store is not None
    assert aws.aws_elastic_block_store.volume_id == "vol-1"
    assert rbd.rbd is not None and rbd.rbd.pool == "rbd" and rbd.rbd.monitors == ("a", "b")
    assert iscsi.iscsi is not None and iscsi.iscsi.iqn == "iqn.1"
    assert [v.has_disk for v in pod.spec.volumes] == [False, False, True, True, True, True, False]


def test_persistent_volume_fields() -> None:
    pv = parse_persistent_volume(
        {
            "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "a"}},
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "claimRef": {"namespace": "ns", "name": "pvc-1", "uid": "u1"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": ["node-c"],
                                    }
                                ]
                            }
                        ]
                    }
                },
                "csi": {"driver": "hostpath.csi.k8s.io", "volumeHandle": "h1"},
                "volumeMode": "Block",
            },
            "status": {"phase": "Bound"},
        }
    )
    assert pv.storage == Quantity.parse("10Gi")
    assert pv.access_modes == ("ReadWriteOnce",)
    assert pv.storage_class == "local"
    assert pv.claim_ref == ClaimReference(namespace="ns", name="pvc-1", uid="u1")
    assert pv.csi is not None and pv.csi.volume_handle == "h1"
    assert pv.volume_mode == "Block" and pv.phase == "Bound"
    assert pv_node_affinity_matches(pv, {"kubernetes.io/hostname": "node-c"})
    assert not pv_node_affinity_matches(pv, {"kubernetes.io/hostname": "node-a"})


def test_persistent_volume_claim_fields() -> None:
    pvc = parse_persistent_volume_claim(
        {
            "metadata": {
                "name": "pvc-1",
                "namespace": "ns",
                "annotations": {
                    "pv.kubernetes.io/bind-completed": "yes",
                    "volume.kubernetes.io/selected-node": "node-c",
                },
            },
            "spec": {
                "storageClassName": "local",
                "volumeName": "pv-1",
                "accessModes": ["ReadWriteOncePod"],
                "resources": {"requests": {"storage": "1Gi"}},
                "selector": {
                    "matchLabels": {"tier": "fast"},
                    "matchExpressions": [{"key": "zone", "operator": "Exists"}],
                },
            },
            "status": {"phase": "Bound"},
        }
    )
    assert pvc.key == "ns/pvc-1"
    assert pvc.storage_class == "local" and pvc.storage == Quantity.parse("1Gi")
    assert pvc.fully_bound and pvc.phase == "Bound"
    assert pvc.selector is not None
    assert compile_selector(pvc.selector).matches({"tier": "fast", "zone": "a"})
    assert not compile_selector(pvc.selector).matches({"tier": "fast"})


def test_beta_annotation_names_the_storage_class() -> None:
    meta = ObjectMeta(
        name="x",
        annotations=FrozenMap({"volume.beta.kubernetes.io/storage-class": "beta"}),
    )
    assert PersistentVolumeClaim(metadata=meta, storage_class_name="field").storage_class == "beta"
    assert PersistentVolume(metadata=meta, storage_class_name="field").storage_class == "beta"
    assert PersistentVolumeClaim(metadata=ObjectMeta(name="x")).storage_class == ""


def test_a_volume_name_without_bind_completed_is_not_fully_bound() -> None:
    pvc = parse_persistent_volume_claim(
        {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"volumeName": "pv"}}
    )
    assert not pvc.fully_bound


def test_topology_terms() -> None:
    zone_a = TopologySelectorTerm(
        match_label_expressions=(TopologySelectorRequirement(key="zone", values=("a", "b")),)
    )
    assert topology_matches((), {})
    assert topology_matches((zone_a,), {"zone": "b"})
    assert not topology_matches((zone_a,), {"zone": "c"})
    assert not topology_matches((TopologySelectorTerm(),), {"zone": "a"})


def test_claim_ref_matching_with_and_without_uid() -> None:
    pvc = PersistentVolumeClaim(metadata=ObjectMeta(name="c", namespace="ns", uid="u1"))

    def pv(ref: ClaimReference | None) -> PersistentVolume:
        return PersistentVolume(metadata=ObjectMeta(name="pv"), claim_ref=ref)

    assert volume_bound_to_claim(pv(ClaimReference(namespace="ns", name="c")), pvc)
    assert volume_bound_to_claim(pv(ClaimReference(namespace="ns", name="c", uid="u1")), pvc)
    assert not volume_bound_to_claim(pv(ClaimReference(namespace="ns", name="c", uid="u2")), pvc)
    assert not volume_bound_to_claim(pv(ClaimReference(namespace="other", name="c")), pvc)
    assert not volume_bound_to_claim(pv(None), pvc)


def test_access_modes_and_ownership() -> None:
    pvc = parse_persistent_volume_claim(
        {
            "metadata": {
                "name": "web-scratch",
                "namespace": "ns",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": "web",
                        "uid": "p1",
                        "controller": True,
                    }
                ],
            },
            "spec": {"accessModes": ["ReadWriteOnce"]},
        }
    )
    rwo = PersistentVolume(metadata=ObjectMeta(name="a"), access_modes=("ReadWriteOnce",))
    rox = PersistentVolume(metadata=ObjectMeta(name="b"), access_modes=("ReadOnlyMany",))
    assert access_modes_satisfied(pvc, rwo) and not access_modes_satisfied(pvc, rox)
    assert claim_is_for_pod(pvc, "ns", "p1") and not claim_is_for_pod(pvc, "ns", "p2")


def test_storage_class_csi_node_and_driver() -> None:
    sc = parse_storage_class(
        {
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}],
        }
    )
    assert sc.name == "local" and sc.volume_binding_mode == "WaitForFirstConsumer"
    assert topology_matches(sc.allowed_topologies, {"zone": "a"})
    node = parse_csi_node(
        {
            "metadata": {"name": "node-a"},
            "spec": {
                "drivers": [
                    {
                        "name": "d1",
                        "nodeID": "n",
                        "allocatable": {"count": 3},
                        "topologyKeys": ["zone"],
                    },
                    {"name": "d2", "nodeID": "n"},
                ]
            },
        }
    )
    assert [(d.name, d.allocatable_count) for d in node.drivers] == [("d1", 3), ("d2", None)]
    assert node.drivers[0].topology_keys == ("zone",)
    driver = parse_csi_driver({"metadata": {"name": "d1"}, "spec": {"storageCapacity": True}})
    assert driver.storage_capacity and not driver.prevent_pod_scheduling_if_missing
