"""What e2e/controlplane/build.sh builds for a release, run with a stand-in `go` on PATH.

Covers: by default the primary release builds every binary its module pins, while 1.34 and
1.35 build only kube-apiserver (their kube-scheduler and kube-controller-manager are pinned but
built on demand, so `make controlplane`, and a cold CI run, does not grow); named, they are
built; binaries already in the cache (such as ones built by hand from the same pins) are kept
and not built again; the 1.34 and 1.35 modules pin both as tools.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from dra_operator.controlplane import PINNED

MODULES = Path(__file__).resolve().parents[3] / "e2e" / "controlplane"
ON_DEMAND = ("kube-scheduler", "kube-controller-manager")
FAKE_GO = """#!/usr/bin/env bash
# Stands in for `go build ... -o OUT PKG`: records the package and writes OUT.
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then out=$2; shift; fi
  shift
done
echo built > "$out"
chmod +x "$out"
"""


def _build(tmp_path: Path, *args: str) -> tuple[set[str], str]:
    """The binaries build.sh built into an empty cache (names), and its output."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "go"
    fake.write_text(FAKE_GO)
    fake.chmod(0o755)
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "DRA_OPERATOR_K8S_CACHE": str(cache),
    }
    done = subprocess.run(
        ["bash", str(MODULES / "build.sh"), *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=60,
    )
    built = set(re.findall(r"^(\S+) v\S+: built in", done.stdout, re.MULTILINE))
    return built, done.stdout


@pytest.mark.parametrize("release", ["1.34", "1.35"])
def test_older_releases_build_only_kube_apiserver_by_default(tmp_path: Path, release: str) -> None:
    built, _ = _build(tmp_path, release)
    assert built == {"kube-apiserver"}


@pytest.mark.parametrize("release", ["1.34", "1.35"])
def test_kube_scheduler_and_kcm_of_older_releases_are_built_when_named(
    tmp_path: Path, release: str
) -> None:
    built, _ = _build(tmp_path, release, *ON_DEMAND)
    assert built == set(ON_DEMAND)
    version = PINNED[int(release.split(".")[1])]
    for name in ON_DEMAND:
        assert (tmp_path / "cache" / version / name).is_file()


def test_binaries_already_cached_are_kept(tmp_path: Path) -> None:
    version = PINNED[35]
    cached = tmp_path / "cache" / version / "kube-scheduler"
    cached.parent.mkdir(parents=True)
    cached.write_text("by hand")
    cached.chmod(0o755)
    built, out = _build(tmp_path, "1.35", *ON_DEMAND)
    assert built == {"kube-controller-manager"}
    assert f"kube-scheduler {version}: cached" in out
    assert cached.read_text() == "by hand"


def test_the_primary_release_builds_every_pinned_binary(tmp_path: Path) -> None:
    built, _ = _build(tmp_path)
    expected = {"etcd", "kube-apiserver", "kubectl", "kubelet", *ON_DEMAND}
    assert built == expected


@pytest.mark.parametrize("minor", [34, 35])
def test_the_older_modules_pin_kube_scheduler_and_kcm(minor: int) -> None:
    go_mod = (MODULES / f"v1.{minor}" / "go.mod").read_text()
    for name in ("kube-apiserver", *ON_DEMAND):
        assert re.search(rf"^\s*(tool\s+)?k8s\.io/kubernetes/cmd/{name}$", go_mod, re.MULTILINE)
