"""Kubernetes' IP, CIDR and URL libraries (k8s.io/apiserver/pkg/cel/library).

IPs follow Go's `netip`: no zones, no IPv4-mapped IPv6, no leading zeroes; the predicates
(`isGlobalUnicast`, ...) use Go's definitions, which differ from Python's `is_global`.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from dataclasses import dataclass

from dra_operator.cel import _types as T
from dra_operator.cel._functions import declare
from dra_operator.cel._runtime import register_type_name
from dra_operator.errors import CELRuntimeError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class IP:
    addr: Address

    def __str__(self) -> str:
        return str(self.addr)


@dataclass(frozen=True, slots=True)
class CIDR:
    """A prefix that keeps its address bits (`1.2.3.4/24`), like Go's `netip.Prefix`."""

    addr: Address
    bits: int

    @property
    def network(self) -> Network:
        return ipaddress.ip_network(f"{self.addr}/{self.bits}", strict=False)

    def __str__(self) -> str:
        return f"{self.addr}/{self.bits}"


@dataclass(frozen=True, slots=True)
class URL:
    parts: urllib.parse.SplitResult


def _parse_addr(raw: str) -> Address:
    if "%" in raw:
        raise CELRuntimeError(f'IP address "{raw}" with zone value is not allowed')
    try:
        addr = ipaddress.ip_address(raw)
    except ValueError as exc:
        raise CELRuntimeError(
            f'IP Address "{raw}" parse error during conversion from string: {exc}'
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELRuntimeError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return addr


def _ip(raw: str) -> IP:
    return IP(_parse_addr(raw))


def _is_ip(raw: str) -> bool:
    try:
        _parse_addr(raw)
    except CELRuntimeError:
        return False
    return True


def _is_canonical(raw: str) -> bool:
    return str(_parse_addr(raw)) == raw


_LINK_LOCAL_MULTICAST = (
    ipaddress.ip_network("224.0.0.0/24"),
    ipaddress.ip_network("ff02::/16"),
)


def _is_link_local_multicast(ip: IP) -> bool:
    return any(ip.addr in net for net in _LINK_LOCAL_MULTICAST if net.version == ip.addr.version)


def _is_global_unicast(ip: IP) -> bool:
    """Go's `Addr.IsGlobalUnicast`: private ranges count as global, broadcast does not."""
    addr = ip.addr
    if addr.version == 4 and int(addr) == 0xFFFFFFFF:
        return False
    return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local)


def _cidr(raw: str) -> CIDR:
    address, sep, bits_text = raw.partition("/")
    try:
        if not sep or not bits_text.isdigit() or (len(bits_text) > 1 and bits_text[0] == "0"):
            raise ValueError(f"netip.ParsePrefix(\"{raw}\"): no '/'" if not sep else "bad bits")
        addr = ipaddress.ip_address(address)
        bits = int(bits_text)
        if bits > addr.max_prefixlen or "%" in address:
            raise ValueError(f'netip.ParsePrefix("{raw}"): prefix length out of range')
    except ValueError as exc:
        raise CELRuntimeError(
            f"network address parse error during conversion from string: {exc}"
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELRuntimeError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return CIDR(addr, bits)


def _is_cidr(raw: str) -> bool:
    try:
        _cidr(raw)
    except CELRuntimeError:
        return False
    return True


def _contains_ip(cidr: CIDR, other: IP | str) -> bool:
    addr = other.addr if isinstance(other, IP) else _parse_addr(other)
    return addr.version == cidr.addr.version and addr in cidr.network


def _contains_cidr(cidr: CIDR, other: CIDR | str) -> bool:
    inner = other if isinstance(other, CIDR) else _cidr(other)
    if inner.addr.version != cidr.addr.version:
        return False
    return cidr.network.overlaps(inner.network) and cidr.bits <= inner.bits


def _masked(cidr: CIDR) -> CIDR:
    return CIDR(cidr.network.network_address, cidr.bits)


def _url(raw: str) -> URL:
    parts = urllib.parse.urlsplit(raw)
    absolute = bool(parts.scheme) or raw.startswith("/")
    if not absolute or " " in raw:
        raise CELRuntimeError(
            f'URL parse error during conversion from string: parse "{raw}": invalid URI for request'
        )
    return URL(parts)


def _is_url(raw: str) -> bool:
    try:
        _url(raw)
    except CELRuntimeError:
        return False
    return True


def _hostname(url: URL) -> str:
    host = url.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.partition(":")[0]


def _port(url: URL) -> str:
    host = url.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        rest = host[host.find("]") + 1 :]
        return rest[1:] if rest.startswith(":") else ""
    return host.partition(":")[2]


def _query(url: URL) -> dict[str, tuple[str, ...]]:
    result: dict[str, list[str]] = {}
    for key, value in urllib.parse.parse_qsl(url.parts.query, keep_blank_values=True):
        result.setdefault(key, []).append(value)
    return {k: tuple(v) for k, v in result.items()}


def install() -> None:
    for cls, name in ((IP, T.IP), (CIDR, T.CIDR), (URL, T.URL)):
        register_type_name(cls, name)
    S, B, N = T.STRING, T.BOOL, T.INT
    declare("ip", "string_to_ip", (S,), T.IP, _ip)
    declare("family", "ip_family", (T.IP,), N, lambda ip: ip.addr.version, member=True)
    declare("ip.isCanonical", "ip_is_canonical", (S,), B, _is_canonical)
    for name, overload, predicate in (
        ("isUnspecified", "ip_is_unspecified", lambda ip: ip.addr.is_unspecified),
        ("isLoopback", "ip_is_loopback", lambda ip: ip.addr.is_loopback),
        ("isLinkLocalMulticast", "ip_is_link_local_multicast", _is_link_local_multicast),
        ("isLinkLocalUnicast", "ip_is_link_local_unicast", lambda ip: ip.addr.is_link_local),
        ("isGlobalUnicast", "ip_is_global_unicast", _is_global_unicast),
    ):
        declare(name, overload, (T.IP,), B, predicate, member=True)
    declare("isIP", "is_ip", (S,), B, _is_ip)
    declare("string", "ip_to_string", (T.IP,), S, str)
    declare("cidr", "string_to_cidr", (S,), T.CIDR, _cidr)
    declare("containsIP", "cidr_contains_ip_string", (T.CIDR, S), B, _contains_ip, member=True)
    declare("containsIP", "cidr_contains_ip_ip", (T.CIDR, T.IP), B, _contains_ip, member=True)
    declare(
        "containsCIDR", "cidr_contains_cidr_string", (T.CIDR, S), B, _contains_cidr, member=True
    )
    declare("containsCIDR", "cidr_contains_cidr", (T.CIDR, T.CIDR), B, _contains_cidr, member=True)
    declare("ip", "cidr_ip", (T.CIDR,), T.IP, lambda c: IP(c.addr), member=True)
    declare("prefixLength", "cidr_prefix_length", (T.CIDR,), N, lambda c: c.bits, member=True)
    declare("masked", "cidr_masked", (T.CIDR,), T.CIDR, _masked, member=True)
    declare("isCIDR", "is_cidr", (S,), B, _is_cidr)
    declare("string", "cidr_to_string", (T.CIDR,), S, str)
    declare("url", "string_to_url", (S,), T.URL, _url)
    declare("getScheme", "url_get_scheme", (T.URL,), S, lambda u: u.parts.scheme, member=True)
    declare(
        "getHost",
        "url_get_host",
        (T.URL,),
        S,
        lambda u: u.parts.netloc.rpartition("@")[2],
        member=True,
    )
    declare("getHostname", "url_get_hostname", (T.URL,), S, _hostname, member=True)
    declare("getPort", "url_get_port", (T.URL,), S, _port, member=True)
    declare(
        "getEscapedPath", "url_get_escaped_path", (T.URL,), S, lambda u: u.parts.path, member=True
    )
    declare("getQuery", "url_get_query", (T.URL,), T.map_of(S, T.list_of(S)), _query, member=True)
    declare("isURL", "is_url_string", (S,), B, _is_url)
