"""What a local node takes from the host, and giving all of it back: a bridge, cgroups, mounts.

A node's pods are attached to a Linux bridge of its own, which also carries the node's address
(the kubelet listens there, so `kubectl logs`/`exec` reach it; a loopback node IP would not
do). Its kubelet puts pods under a cgroup root of its own in every hierarchy, so two kubelets
on one host never treat each other's pods as orphans. Everything containerd and the kubelet
mount lives under the node's directory (containerd keeps its network-namespace mounts under
its state dir). Taking a node down therefore means: kill what still runs in its cgroups, kill
the runtime shims serving its containerd socket, unmount everything under its directory,
remove its cgroups and delete its bridge (which takes the pods' veth ends along once their
network namespaces are gone).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import signal
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from dra_operator.controlplane._processes import wait_until
from dra_operator.errors import ControlPlaneError

__all__ = [
    "add_bridge",
    "cgroup_mounts",
    "delete_link",
    "forget_cni_results",
    "forget_shim_sockets",
    "host_addresses",
    "kill_cgroup_tree",
    "kill_processes_mentioning",
    "link_exists",
    "make_cgroup",
    "mounts_under",
    "unmount_under",
]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if check and done.returncode != 0:
        raise ControlPlaneError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def add_bridge(name: str, address: str) -> None:
    """Create bridge `name` holding `address` (CIDR form) and bring it up."""
    _ip("link", "add", name, "type", "bridge")
    _ip("addr", "add", address, "dev", name)
    _ip("link", "set", name, "up")


def host_addresses() -> list[str]:
    """The IPv4 addresses on this host's interfaces."""
    out = _ip("-o", "-4", "addr", "show").stdout
    return [line.split()[3].split("/")[0] for line in out.splitlines() if len(line.split()) > 3]


def link_exists(name: str) -> bool:
    return Path("/sys/class/net", name).exists()


def delete_link(name: str) -> None:
    if link_exists(name):
        _ip("link", "del", name)


CNI_CACHE = Path("/var/lib/cni/results")


def forget_cni_results(network: str, cache: Path = CNI_CACHE) -> None:
    """Delete libcni's cached results of `network`'s attachments (and of their loopbacks):
    containers killed without a CNI DEL leave them behind."""
    for result in cache.glob(f"{network}-*"):
        container = result.name.removeprefix(f"{network}-").rsplit("-", 1)[0]
        (cache / f"cni-loopback-{container}-lo").unlink(missing_ok=True)
        result.unlink(missing_ok=True)


def _mountinfo() -> Iterator[tuple[str, str]]:
    """(mount point, filesystem type) of every mount this process sees."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        separator = fields.index("-")
        point = fields[4].encode().decode("unicode_escape")
        yield point, fields[separator + 1]


def cgroup_mounts() -> list[Path]:
    """The mount point of every cgroup hierarchy (v1 controllers and the v2 one)."""
    return [Path(point) for point, kind in _mountinfo() if kind in ("cgroup", "cgroup2")]


def make_cgroup(relative: str) -> None:
    """Create cgroup `relative` (like `/dra-operator-x`) in every hierarchy."""
    for mount in cgroup_mounts():
        (mount / relative.lstrip("/")).mkdir(parents=True, exist_ok=True)


def _cgroup_dirs(relative: str) -> list[Path]:
    """Every directory of the cgroup tree `relative`, in every hierarchy, deepest first."""
    found: list[Path] = []
    for mount in cgroup_mounts():
        top = mount / relative.lstrip("/")
        if top.is_dir():
            found += [Path(d) for d, _, _ in os.walk(top)]
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def _pids_in(directories: list[Path]) -> set[int]:
    pids: set[int] = set()
    for directory in directories:
        with contextlib.suppress(OSError):
            pids.update(int(p) for p in (directory / "cgroup.procs").read_text().split())
    return pids


def kill_cgroup_tree(relative: str, timeout: float = 20.0) -> None:
    """SIGKILL every process in cgroup tree `relative`, then remove its directories."""
    directories = _cgroup_dirs(relative)

    def empty() -> bool:
        pids = _pids_in(directories)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return not pids

    wait_until(empty, timeout, interval=0.2)
    for directory in directories:

        def removed(directory: Path = directory) -> bool:
            try:
                directory.rmdir()
            except FileNotFoundError:
                return True
            except OSError:
                return False
            return True

        if not wait_until(removed, timeout, interval=0.2):
            raise ControlPlaneError(f"cgroup {directory} could not be removed")


def kill_processes_mentioning(needle: str, timeout: float = 10.0) -> dict[int, list[str]]:
    """SIGKILL the processes with `needle` as an argument (a node's own socket path, which
    only its containerd's shims carry); the command line of each, by pid."""
    mine = os.getpid()
    found: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == mine:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if needle in argv:
            found[int(entry.name)] = argv
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(Path(f"/proc/{p}").exists() for p in found), timeout)
    return found


SHIM_SOCKETS = Path("/run/containerd/s")


def forget_shim_sockets(shims: Iterable[list[str]], directory: Path = SHIM_SOCKETS) -> None:
    """Remove the sockets of killed runtime shims (a shim removes its own only when it exits
    cleanly). containerd names them by the SHA-256 of `<address>/<namespace>/<id>` (and of
    that plus `/debug`), from the shim's `-address`, `-namespace` and `-id` arguments."""
    for argv in shims:
        flags = dict(itertools.pairwise(argv))
        if not {"-address", "-namespace", "-id"} <= flags.keys():
            continue
        base = f"{flags['-address']}/{flags['-namespace']}/{flags['-id']}"
        for path in (base, f"{base}/debug"):
            (directory / hashlib.sha256(path.encode()).hexdigest()).unlink(missing_ok=True)
    for leftover in (directory, directory.parent):
        with contextlib.suppress(OSError):
            leftover.rmdir()  # only when empty: nothing else uses them


def mounts_under(directory: Path) -> list[str]:
    """Mount points at or below `directory`, deepest first."""
    root = str(directory.resolve())
    points = [p for p, _ in _mountinfo() if p == root or p.startswith(root + "/")]
    return sorted(set(points), key=lambda p: p.count("/"), reverse=True)


def unmount_under(directory: Path) -> None:
    """Unmount everything at or below `directory` (lazily, if a mount is still busy)."""
    for point in mounts_under(directory):
        done = subprocess.run(["umount", point], capture_output=True, check=False, timeout=30)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", point], capture_output=True, check=False, timeout=30)
    left = mounts_under(directory)
    if left:
        raise ControlPlaneError(f"still mounted after unmounting: {', '.join(left)}")
