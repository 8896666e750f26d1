"""What a real node is configured with: the settings this host needs, nothing on system paths."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

from dra_operator.controlplane import ControlPlaneState, NodeBinaries, read_state
from dra_operator.controlplane._host import forget_cni_results, forget_shim_sockets
from dra_operator.controlplane._nodeconfig import containerd_config, kubelet_config
from dra_operator.controlplane._realnodes import plan_nodes


def test_nodes_are_distinct_on_the_host(tmp_path: Path) -> None:
    nodes = plan_nodes(tmp_path, 2)
    assert [n.name for n in nodes] == ["node-1", "node-2"]
    for field in ("bridge", "address", "pod_subnet", "cgroup_root", "directory", "run_dir"):
        assert len({getattr(n, field) for n in nodes}) == 2
    assert all(len(n.bridge) <= 15 for n in nodes)  # IFNAMSIZ


def test_addresses_avoid_those_in_use(tmp_path: Path) -> None:
    (first,) = plan_nodes(tmp_path, 1)
    (second,) = plan_nodes(tmp_path, 1, taken=[first.address, "192.168.1.2"])
    assert second.address.split(".")[1] != first.address.split(".")[1]
    assert second.bridge == first.bridge  # names depend on the state dir only


def test_containerd_keeps_everything_under_the_node(tmp_path: Path) -> None:
    (node,) = plan_nodes(tmp_path, 1)
    config = tomllib.loads(containerd_config(node, NodeBinaries(tmp_path / "bin")))
    assert config["version"] == 3
    assert config["grpc"]["address"] == str(node.containerd_socket)
    runtime = config["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["cdi_spec_dirs"] == [str(node.cdi_dir)]
    assert runtime["restrict_oom_score_adj"] is True
    assert runtime["netns_mounts_under_state_dir"] is True
    for path in (config["root"], config["state"], runtime["cni"]["conf_dir"]):
        assert path.startswith(node.directory)


def test_kubelet_listens_on_the_node_address(tmp_path: Path) -> None:
    (node,) = plan_nodes(tmp_path, 1)
    config = kubelet_config(node, tmp_path / "ca.crt", "DRAConsumableCapacity=true,Foo=false")
    assert config["address"] == config["healthzBindAddress"] == node.address
    assert not node.address.startswith("127.")
    assert config["authentication"]["anonymous"] == {"enabled": False}
    assert config["failCgroupV1"] is False
    assert config["cgroupRoot"] == node.cgroup_root
    assert config["featureGates"] == {"DRAConsumableCapacity": True, "Foo": False}


def test_forget_cni_results(tmp_path: Path) -> None:
    for name in ("br0-abc-eth0", "cni-loopback-abc-lo", "other-def-eth0", "cni-loopback-def-lo"):
        (tmp_path / name).touch()
    forget_cni_results("br0", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cni-loopback-def-lo", "other-def-eth0"]


def test_the_nodes_survive_the_state_file(tmp_path: Path) -> None:
    nodes = tuple(plan_nodes(tmp_path, 2))
    ControlPlaneState(state_dir=tmp_path, version="v1.36.4", nodes=nodes).save()
    state = read_state(tmp_path)
    assert state is not None and state.nodes == nodes


def test_forget_shim_sockets(tmp_path: Path) -> None:
    sockets = tmp_path / "run" / "s"
    sockets.mkdir(parents=True)
    argv = ["containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", "/x.sock"]
    mine = hashlib.sha256(b"/x.sock/k8s.io/abc").hexdigest()
    (sockets / mine).touch()
    forget_shim_sockets([argv], sockets)
    assert not sockets.exists()  # emptied, so removed (and its parent with it)
