"""Finding the upstream binaries built by `make controlplane` (e2e/controlplane/build.sh).

Lookup order: an explicit directory, $DRA_OPERATOR_K8S_BIN, then the per-version build cache
$DRA_OPERATOR_K8S_CACHE (default $XDG_CACHE_HOME/dra-operator/k8s, i.e. ~/.cache/...)/<version>,
the same place build.sh writes; a release built without etcd or kubectl uses the primary's.
Several releases are pinned side by side (`PINNED`, one Go module per minor in
e2e/controlplane/v1.<minor>/); a version may be named by its minor ("1.36") or in full
("v1.36.4"), from the argument or $DRA_OPERATOR_K8S_VERSION, and defaults to the primary
release `K8S_VERSION`. A unit test keeps `PINNED` equal to the go.mod pins, so
an installed package (without the repo) still finds what the repo built.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from pathlib import Path

from dra_operator.errors import ControlPlaneError

__all__ = [
    "CONTAINERD_VERSION",
    "K8S_VERSION",
    "PINNED",
    "Binaries",
    "NodeBinaries",
    "cache_root",
    "find_binaries",
    "find_node_binaries",
    "minor_of",
    "pinned_version",
]

# minor -> the patch release e2e/controlplane/v1.<minor>/go.mod pins
PINNED: dict[int, str] = {
    27: "v1.27.8",
    28: "v1.28.15",
    29: "v1.29.15",
    30: "v1.30.14",
    31: "v1.31.0",
    32: "v1.32.2",
    33: "v1.33.13",
    34: "v1.34.4",
    35: "v1.35.4",
    36: "v1.36.5",
    37: "v1.37.2",
}
K8S_VERSION = PINNED[37]
SHARED = frozenset({"etcd", "kubectl"})  # taken from the primary release when not built
ON_DEMAND = frozenset({"kube-scheduler", "kube-controller-manager"})
"""Pinned for 1.34 and 1.35 too, but built there only when named (`controlplane up
--with-upstream --version 1.35`, the routing races): `make controlplane` leaves them out."""


def cache_root() -> Path:
    """The directory holding one build directory per Kubernetes version."""
    explicit = os.environ.get("DRA_OPERATOR_K8S_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "dra-operator" / "k8s"


@dataclasses.dataclass(frozen=True, slots=True)
class Binaries:
    """Paths of the control-plane binaries in one directory."""

    directory: Path

    def path(self, name: str) -> Path:
        """Where `name` is; etcd and kubectl fall back to the primary release's beside it.

        The older releases build only kube-apiserver: etcd serves any of them alike (its v3
        API is what they all speak), and kubectl here only renders deploy/'s kustomization.
        """
        own = self.directory / name
        if name in SHARED and not os.access(own, os.X_OK):
            primary = self.directory.parent / K8S_VERSION / name
            if os.access(primary, os.X_OK):
                return primary
        return own

    def has(self, name: str) -> bool:
        return os.access(self.path(name), os.X_OK)

    def require(self, name: str) -> Path:
        """The binary's path, or a ControlPlaneError that says how to build it."""
        if not self.has(name):
            how = "make controlplane"
            release = self.directory.name
            if name in ON_DEMAND and re.fullmatch(r"v1\.3[45]\.\d+", release):
                how = f"bash e2e/controlplane/build.sh {release} {name}"
            raise ControlPlaneError(
                f"{name} not found in {self.directory}: run `{how}` or set DRA_OPERATOR_K8S_BIN"
            )
        return self.path(name)

    def kubernetes_version(self) -> str:
        """The version kube-apiserver reports (`v1.36.4`), read from `--version`."""
        out = subprocess.run(
            [str(self.require("kube-apiserver")), "--version"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        ).stdout
        match = re.search(r"v\d+\.\d+\.\d+\S*", out)
        if not match:
            raise ControlPlaneError(f"kube-apiserver --version printed no version: {out!r}")
        return match.group(0)


def find_binaries(
    directory: str | os.PathLike[str] | None = None, version: str | None = None
) -> Binaries:
    """Where the binaries should be; whether each is there is `Binaries.require`'s question."""
    if directory:
        return Binaries(Path(directory))
    env = os.environ.get("DRA_OPERATOR_K8S_BIN")
    if env:
        return Binaries(Path(env))
    version = version or os.environ.get("DRA_OPERATOR_K8S_VERSION") or K8S_VERSION
    return Binaries(cache_root() / pinned_version(version))


def pinned_version(version: str) -> str:
    """The full version for a minor (`1.36` -> its pinned patch); a full version as it is."""
    match = re.fullmatch(r"v?1\.(\d+)", version)
    if not match:
        return version
    minor = int(match.group(1))
    if minor not in PINNED:
        known = ", ".join(f"1.{m}" for m in sorted(PINNED))
        raise ControlPlaneError(f"kubernetes {version} is not pinned (pinned: {known})")
    return PINNED[minor]


def minor_of(version: str) -> int:
    """36 for `v1.36.4`."""
    match = re.match(r"v?1\.(\d+)", version)
    if not match:
        raise ControlPlaneError(f"not a Kubernetes version: {version!r}")
    return int(match.group(1))


CONTAINERD_VERSION = "v2.4.2"


@dataclasses.dataclass(frozen=True, slots=True)
class NodeBinaries:
    """What a real node runs besides the kubelet: containerd 2.x, its runc shim and ctr (built
    by e2e/node/build.sh), and runc and the CNI plugins from Debian."""

    directory: Path
    runc: Path = Path("/usr/sbin/runc")
    cni_dir: Path = Path("/usr/lib/cni")

    @property
    def containerd(self) -> Path:
        return self.directory / "containerd"

    @property
    def ctr(self) -> Path:
        return self.directory / "ctr"

    def missing(self) -> list[str]:
        """What is not there, each with how to get it."""
        found = []
        for name in ("containerd", "containerd-shim-runc-v2", "ctr"):
            if not os.access(self.directory / name, os.X_OK):
                found.append(f"{self.directory / name} (make node-runtime)")
        if not os.access(self.runc, os.X_OK):
            found.append(f"{self.runc} (make node-packages: Debian runc)")
        if not (self.cni_dir / "bridge").is_file():
            found.append(f"{self.cni_dir}/bridge (make node-packages: containernetworking-plugins)")
        return found

    def require(self) -> NodeBinaries:
        missing = self.missing()
        if missing:
            raise ControlPlaneError(f"real nodes need: {', '.join(missing)}")
        return self


def find_node_binaries(directory: str | os.PathLike[str] | None = None) -> NodeBinaries:
    """containerd's build directory: `directory`, $DRA_OPERATOR_CONTAINERD_BIN, else the cache."""
    chosen = directory or os.environ.get("DRA_OPERATOR_CONTAINERD_BIN")
    return NodeBinaries(
        Path(chosen) if chosen else cache_root() / f"containerd-{CONTAINERD_VERSION}"
    )
