"""Finding the upstream binaries.

Covers: each pinned release equals the pin in e2e/controlplane/v1.<minor>/go.mod and the
primary one is build.sh's default (so an installed package looks where `make controlplane`
builds); a minor resolves to its pinned patch; explicit directory over $DRA_OPERATOR_K8S_BIN over
the per-version cache; the cache honours $DRA_OPERATOR_K8S_CACHE and $XDG_CACHE_HOME like
build.sh; a missing binary is a ControlPlaneError that says how to build it; a release without
its own etcd or kubectl uses the primary release's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dra_operator.controlplane import (
    CONTAINERD_VERSION,
    K8S_VERSION,
    PINNED,
    NodeBinaries,
    cache_root,
    find_binaries,
    minor_of,
    pinned_version,
)
from dra_operator.errors import ControlPlaneError

MODULES = Path(__file__).resolve().parents[3] / "e2e" / "controlplane"


def test_pins_are_the_go_mod_pins() -> None:
    pins = {}
    for go_mod in MODULES.glob("v1.*/go.mod"):
        pin = re.search(r"^require k8s\.io/kubernetes (v\S+)", go_mod.read_text(), re.MULTILINE)
        assert pin is not None, go_mod
        assert go_mod.parent.name == f"v1.{minor_of(pin.group(1))}"
        pins[minor_of(pin.group(1))] = pin.group(1)
    assert pins == PINNED


def test_primary_release_is_the_build_default() -> None:
    default = re.search(r"^release=(\S+)$", (MODULES / "build.sh").read_text(), re.MULTILINE)
    assert default is not None
    assert PINNED[minor_of(default.group(1))] == K8S_VERSION


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        pytest.param("1.36", PINNED[36], id="minor"),
        pytest.param("v1.37", PINNED[37], id="v-minor"),
        pytest.param("v1.36.9", "v1.36.9", id="full"),
    ],
)
def test_pinned_version(version: str, expected: str) -> None:
    assert pinned_version(version) == expected


def test_unpinned_minor_is_an_error() -> None:
    with pytest.raises(ControlPlaneError, match=r"kubernetes 1\.26 is not pinned \(pinned: 1\.27"):
        pinned_version("1.26")


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
    monkeypatch.setenv("DRA_OPERATOR_K8S_VERSION", "1.36")
    assert find_binaries().directory == clean_env / "cache" / PINNED[36]
    monkeypatch.setenv("DRA_OPERATOR_K8S_BIN", str(clean_env / "bin"))
    assert find_binaries().directory == clean_env / "bin"
    assert find_binaries(clean_env / "explicit").directory == clean_env / "explicit"


def test_missing_binary_says_how_to_build(clean_env: Path) -> None:
    with pytest.raises(ControlPlaneError, match="run `make controlplane`"):
        find_binaries(clean_env).require("kube-apiserver")


def test_a_missing_kube_scheduler_of_1_35_names_its_build(clean_env: Path) -> None:
    """`make controlplane` builds only kube-apiserver of 1.34 and 1.35: the rest on demand."""
    binaries = find_binaries(clean_env / PINNED[35])
    with pytest.raises(ControlPlaneError, match=rf"build.sh {PINNED[35]} kube-scheduler`"):
        binaries.require("kube-scheduler")
    with pytest.raises(ControlPlaneError, match="run `make controlplane`"):
        binaries.require("kube-apiserver")


@pytest.mark.parametrize(
    ("version", "minor"),
    [pytest.param("v1.36.4", 36, id="tag"), pytest.param("1.37.0-rc.1", 37, id="prerelease")],
)
def test_minor_of(version: str, minor: int) -> None:
    assert minor_of(version) == minor


def test_containerd_version_is_the_node_go_mod_pin() -> None:
    node_mod = MODULES.parent / "node" / "go.mod"
    pin = re.search(r"^\tgithub\.com/containerd/containerd/v2 (v\S+)", node_mod.read_text(), re.M)
    assert pin is not None
    assert pin.group(1) == CONTAINERD_VERSION


def test_node_binaries_say_what_is_missing(tmp_path: Path) -> None:
    binaries = NodeBinaries(tmp_path, runc=tmp_path / "runc", cni_dir=tmp_path / "cni")
    with pytest.raises(ControlPlaneError) as caught:
        binaries.require()
    for wanted in ("containerd (make node-runtime)", "runc (make node-packages", "cni/bridge"):
        assert wanted in str(caught.value)


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("name", ["etcd", "kubectl"])
def test_shared_binaries_fall_back_to_the_primary_release(clean_env: Path, name: str) -> None:
    """The older releases build only kube-apiserver: the primary's etcd and kubectl serve."""
    primary = _executable(cache_root() / K8S_VERSION / name)
    old = find_binaries(version="v1.31.0")
    assert old.has(name) and old.path(name) == primary
    own = _executable(old.directory / name)
    assert old.path(name) == own


def test_apiserver_never_falls_back(clean_env: Path) -> None:
    _executable(cache_root() / K8S_VERSION / "kube-apiserver")
    old = find_binaries(version="v1.31.0")
    assert not old.has("kube-apiserver")
    with pytest.raises(ControlPlaneError, match="run `make controlplane`"):
        old.require("kube-apiserver")


def test_shared_binary_missing_everywhere_is_the_release_own_path(clean_env: Path) -> None:
    old = find_binaries(version="v1.31.0")
    assert old.path("kubectl") == old.directory / "kubectl"
    assert not old.has("kubectl")
