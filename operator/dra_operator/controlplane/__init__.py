"""controlplane: a real local kube-apiserver + etcd (+ upstream scheduler and controller-manager).

Used by `dra-operator controlplane` and by the pytest harness, never by the operator itself.
It starts the binaries that `make controlplane` builds from the pinned upstream modules, with
its own PKI, an admin (`system:masters`) and an `operator` identity that holds only the RBAC
bound from deploy/, and every DRA API version and feature gate of the release switched on.
"""

from dra_operator.controlplane._binaries import (
    CONTAINERD_VERSION,
    K8S_VERSION,
    PINNED,
    Binaries,
    NodeBinaries,
    cache_root,
    find_binaries,
    find_node_binaries,
    minor_of,
    pinned_version,
)
from dra_operator.controlplane._controlplane import (
    ADMIN_USER,
    OPERATOR_USER,
    default_state_dir,
    down,
    restart,
    up,
)
from dra_operator.controlplane._drivers import start_drivers
from dra_operator.controlplane._features import (
    SUPPORTED_MINORS,
    Gate,
    Release,
    Stage,
    release_flags,
)
from dra_operator.controlplane._images import TEST_IMAGE, Image, build_image, local_images
from dra_operator.controlplane._nodes import create_ready_node, node_manifest
from dra_operator.controlplane._pki import (
    CertifiedKey,
    issue_client_cert,
    issue_serving_cert,
    new_ca,
    new_sa_key,
)
from dra_operator.controlplane._rbac import bind_cluster_roles, load_cluster_roles
from dra_operator.controlplane._realnodes import import_image
from dra_operator.controlplane._restart import health_url, resume_component, stop_component
from dra_operator.controlplane._state import Component, ControlPlaneState, NodeState, read_state

__all__ = [
    "ADMIN_USER",
    "CONTAINERD_VERSION",
    "K8S_VERSION",
    "OPERATOR_USER",
    "PINNED",
    "SUPPORTED_MINORS",
    "TEST_IMAGE",
    "Binaries",
    "CertifiedKey",
    "Component",
    "ControlPlaneState",
    "Gate",
    "Image",
    "NodeBinaries",
    "NodeState",
    "Release",
    "Stage",
    "bind_cluster_roles",
    "build_image",
    "cache_root",
    "create_ready_node",
    "default_state_dir",
    "down",
    "find_binaries",
    "find_node_binaries",
    "health_url",
    "import_image",
    "issue_client_cert",
    "issue_serving_cert",
    "load_cluster_roles",
    "local_images",
    "minor_of",
    "new_ca",
    "new_sa_key",
    "node_manifest",
    "pinned_version",
    "read_state",
    "release_flags",
    "restart",
    "resume_component",
    "start_drivers",
    "stop_component",
    "up",
]
