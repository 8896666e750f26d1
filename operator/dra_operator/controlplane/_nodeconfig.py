"""The configuration files of a real node: containerd's, the CNI network's and the kubelet's.

Rendered from the node's plan only (pure): everything the node writes goes under its own
directories, and the settings this host needs are here, each with its reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dra_operator.controlplane._apiservice import SERVICE_CIDR
from dra_operator.controlplane._binaries import NodeBinaries
from dra_operator.controlplane._images import PAUSE_IMAGE
from dra_operator.controlplane._state import NodeState

__all__ = [
    "KUBELET_HEALTHZ_PORT",
    "KUBELET_PORT",
    "cni_config",
    "containerd_config",
    "kubelet_config",
]

KUBELET_PORT = 10250
KUBELET_HEALTHZ_PORT = 10248


def _toml(value: object) -> str:
    """A TOML value: JSON strings, lists and booleans are valid TOML."""
    return json.dumps(value)


def containerd_config(node: NodeState, binaries: NodeBinaries) -> str:
    root = Path(node.directory) / "containerd"
    runtime = "plugins.'io.containerd.cri.v1.runtime'"
    lines = [
        "version = 3",
        f"root = {_toml(str(root / 'root'))}",
        f"state = {_toml(str(root / 'state'))}",
        "[grpc]",
        f"  address = {_toml(str(node.containerd_socket))}",
        f"[{runtime}]",
        f"  cdi_spec_dirs = {_toml([str(node.cdi_dir)])}",
        # This VM's root lacks CAP_SYS_RESOURCE: a negative oom_score_adj would fail in runc.
        "  restrict_oom_score_adj = true",
        "  netns_mounts_under_state_dir = true",
        f"[{runtime}.containerd.runtimes.runc]",
        "  runtime_type = 'io.containerd.runc.v2'",
        f"[{runtime}.containerd.runtimes.runc.options]",
        f"  BinaryName = {_toml(str(binaries.runc))}",
        f"  Root = {_toml(str(root / 'runc'))}",
        f"[{runtime}.cni]",
        f"  bin_dirs = {_toml([str(binaries.cni_dir)])}",
        f"  conf_dir = {_toml(str(Path(node.directory) / 'cni'))}",
        "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
        f"  sandbox = {_toml(PAUSE_IMAGE)}",
        "[plugins.'io.containerd.internal.v1.opt']",
        f"  path = {_toml(str(root / 'opt'))}",
        "[plugins.'io.containerd.nri.v1.nri']",
        "  disable = true",
    ]
    return "\n".join(lines) + "\n"


def cni_config(node: NodeState) -> dict[str, Any]:
    """A bridge + host-local network; no masquerading. The Service range is routed through
    the node's address, where `_apiservice` sends the `kubernetes` Service to the apiserver."""
    return {
        "cniVersion": "1.0.0",
        "name": node.bridge,
        "plugins": [
            {
                "type": "bridge",
                "bridge": node.bridge,
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": node.pod_subnet, "gateway": node.address}]],
                    "routes": [{"dst": SERVICE_CIDR}],
                    "dataDir": str(Path(node.directory) / "cni-ipam"),
                },
            }
        ],
    }


def kubelet_config(node: NodeState, ca_file: Path, feature_gates: str) -> dict[str, Any]:
    pki = Path(node.directory) / "pki"
    gates = dict(g.split("=") for g in feature_gates.split(",") if g)
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": node.address,
        "port": KUBELET_PORT,
        "readOnlyPort": 0,
        "healthzBindAddress": node.address,
        "healthzPort": KUBELET_HEALTHZ_PORT,
        "tlsCertFile": str(pki / "kubelet-serving.crt"),
        "tlsPrivateKeyFile": str(pki / "kubelet-serving.key"),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": False},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "containerRuntimeEndpoint": f"unix://{node.containerd_socket}",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": node.cgroup_root,
        # This host mounts cgroup v1 controllers (plus an empty v2 hierarchy).
        "failCgroupV1": False,
        "failSwapOn": False,
        "makeIPTablesUtilChains": False,
        # A small test disk must not evict test pods or collect their images.
        "evictionHard": {},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "podLogsDir": str(Path(node.directory) / "pod-logs"),
        "serializeImagePulls": False,
        "featureGates": {name: value == "true" for name, value in gates.items()},
    }
