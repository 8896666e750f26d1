"""Finding the upstream binaries.

Covers: the default version equals the pin in e2e/controlplane/go.mod (so an installed package
looks where `make controlplane` builds); explicit directory over $DRA_OPERATOR_K8S_BIN over
the per-version cache; the cache honours $DRA_OPERATOR_K8S_CACHE and $XDG_CACHE_HOME like
build.sh; a missing binary is a ControlPlaneError that says how to build it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dra_operator.controlplane import (
    CONTAINERD_VERSION,
    K8S_VERSION,
    NodeBinaries,
    cache_root,
    find_binaries,
    minor_of,
)
from dra_operator.errors import ControlPlaneError

GO_MOD = Path(__file__).resolve().parents[3] / "e2e" / "controlplane" / "go.mod"


def test_default_version_is_the_go_mod_pin() -> None:
    pin = re.search(r"^require k8s\.io/kubernetes (v\S+)", GO_MOD.read_text(), re.MULTILINE)
    assert pin is not None
    assert pin.group(1) == K8S_VERSION


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("DRA_OPERATOR_K8S_BIN", "DRA_OPERATOR_K8S_CACHE", "DRA_OPERATOR_K8S_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path


def test_cache_follows_xdg(clean_env: Path) -> None:
    assert cache_root() == clean_env / "xdg" / "dra-operator" / "k8s"
    assert find_binaries().directory == cache_root() / K8S_VERSION


def test_lookup_precedence(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRA_OPERATOR_K8S_CACHE", str(clean_env / "cache"))
    assert find_binaries(version="v1.37.1").directory == clean_env / "cache" / "v1.37.1"
    monkeypatch.setenv("DRA_OPERATOR_K8S_BIN", str(clean_env / "bin"))
    assert find_binaries().directory == clean_env / "bin"
    assert find_binaries(clean_env / "explicit").directory == clean_env / "explicit"


def test_missing_binary_says_how_to_build(clean_env: Path) -> None:
    with pytest.raises(ControlPlaneError, match="run `make controlplane`"):
        find_binaries(clean_env).require("kube-apiserver")


@pytest.mark.parametrize(
    ("version", "minor"),
    [pytest.param("v1.36.4", 36, id="tag"), pytest.param("1.37.0-rc.1", 37, id="prerelease")],
)
def test_minor_of(version: str, minor: int) -> None:
    assert minor_of(version) == minor


def test_containerd_version_is_the_node_go_mod_pin() -> None:
    node_mod = GO_MOD.parents[1] / "node" / "go.mod"
    pin = re.search(r"^\tgithub\.com/containerd/containerd/v2 (v\S+)", node_mod.read_text(), re.M)
    assert pin is not None
    assert pin.group(1) == CONTAINERD_VERSION


def test_node_binaries_say_what_is_missing(tmp_path: Path) -> None:
    binaries = NodeBinaries(tmp_path, runc=tmp_path / "runc", cni_dir=tmp_path / "cni")
    with pytest.raises(ControlPlaneError) as caught:
        binaries.require()
    for wanted in ("containerd (make node-runtime)", "runc (make node-packages", "cni/bridge"):
        assert wanted in str(caught.value)
