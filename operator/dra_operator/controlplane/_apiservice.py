"""The `kubernetes` Service as pods on real nodes reach it: what kube-proxy does for that one.

A pod's in-cluster config is the kubelet's `KUBERNETES_SERVICE_HOST`/`_PORT` (the ClusterIP
and port 443 of Service `default/kubernetes`), the projected service-account token and the
`kube-root-ca.crt` ConfigMap. In a cluster kube-proxy sends the ClusterIP to the apiserver's
endpoints; here there is no kube-proxy (it would own the host's whole NAT table, which other
control planes on this host share) and the apiserver listens on 127.0.0.1 only. So, per node,
one DNAT rule for packets entering from that node's bridge: ClusterIP:443 → 127.0.0.1:<port>,
and `route_localnet` on the bridge, which lets the kernel route a loopback destination for
packets from it (and only from it). The apiserver's serving certificate names the ClusterIP
and `kubernetes.default.svc`, so in-cluster clients verify it as in any cluster.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from dra_operator.errors import ControlPlaneError

__all__ = [
    "SERVICE_CIDR",
    "SERVICE_IP",
    "SERVICE_NAMES",
    "expose_apiserver",
    "rules_of",
    "withdraw_apiserver",
]

SERVICE_CIDR = "10.0.0.0/24"
SERVICE_IP = "10.0.0.1"  # the first address of SERVICE_CIDR: the apiserver gives it `kubernetes`
SERVICE_NAMES = (
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
_PORT = "443"
_COMMENT = "dra-operator: kubernetes Service for"


def _rule(bridge: str, apiserver_port: int) -> list[str]:
    return [
        "PREROUTING",
        "-i", bridge,
        "-d", f"{SERVICE_IP}/32",
        "-p", "tcp",
        "--dport", _PORT,
        "-m", "comment", "--comment", f"{_COMMENT} {bridge}",
        "-j", "DNAT",
        "--to-destination", f"127.0.0.1:{apiserver_port}",
    ]  # fmt: skip


def _iptables(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            ["iptables", "-w", "-t", "nat", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except FileNotFoundError:
        raise ControlPlaneError("iptables not found: apt-get install iptables") from None
    if check and done.returncode != 0:
        raise ControlPlaneError(f"iptables -t nat {' '.join(args)}: {done.stderr.strip()}")
    return done


def expose_apiserver(bridge: str, apiserver_port: int) -> None:
    """Let the pods of `bridge` reach the apiserver at the `kubernetes` Service address."""
    Path(f"/proc/sys/net/ipv4/conf/{bridge}/route_localnet").write_text("1\n")
    _iptables("-A", *_rule(bridge, apiserver_port))


def withdraw_apiserver(bridge: str) -> None:
    """Delete the rules `expose_apiserver` added for `bridge` (found by their comment: the
    port may be unknown after a crash). The sysctl goes with the bridge."""
    try:
        listed = _iptables("-S", "PREROUTING", check=False).stdout
    except ControlPlaneError:
        return  # no iptables: nothing was ever added
    for rule in rules_of(listed, bridge):
        _iptables("-D", *rule, check=False)


def rules_of(listing: str, bridge: str) -> list[list[str]]:
    """The rules of `iptables -S` output that `expose_apiserver` added for `bridge`, as the
    arguments that delete each (the quoted comment kept as one argument)."""
    marker = f'"{_COMMENT} {bridge}"'
    found = []
    for line in listing.splitlines():
        if marker in line and line.startswith("-A PREROUTING "):
            before, after = line.removeprefix("-A ").split(marker, 1)
            found.append([*before.split(), marker.strip('"'), *after.split()])
    return found
