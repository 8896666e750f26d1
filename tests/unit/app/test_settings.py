"""Settings: which controllers run (architecture §1, "Living beside upstream"), bind addresses.

Covers: all three controllers on a bare control plane; claims and eviction left to
kube-controller-manager when it runs; an explicit --controllers list wins either way and keeps
the start order; controller-runtime's bind-address syntax (host:port, :port, 0 for off).
"""

from __future__ import annotations

import pytest

from dra_operator.app import bind_address, choose_controllers


@pytest.mark.parametrize(
    ("requested", "upstream", "expected"),
    [
        pytest.param(None, False, ["claims", "scheduler", "eviction"], id="bare-control-plane"),
        pytest.param(None, True, ["scheduler"], id="beside-kube-controller-manager"),
        pytest.param(
            frozenset({"eviction", "claims"}), True, ["claims", "eviction"], id="explicit-wins"
        ),
        pytest.param(frozenset({"scheduler"}), False, ["scheduler"], id="explicit-subset"),
    ],
)
def test_choose_controllers(
    requested: frozenset[str] | None, upstream: bool, expected: list[str]
) -> None:
    assert choose_controllers(requested, upstream) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(":8080", ("0.0.0.0", 8080), id="every-interface"),
        pytest.param("127.0.0.1:9090", ("127.0.0.1", 9090), id="host-port"),
        pytest.param("[::1]:8081", ("::1", 8081), id="ipv6"),
        pytest.param("0", None, id="off"),
        pytest.param(None, None, id="unset"),
    ],
)
def test_bind_address(value: str | None, expected: tuple[str, int] | None) -> None:
    assert bind_address(value) == expected


@pytest.mark.parametrize("value", ["8080", "host:", "host:port"])
def test_bind_address_rejects(value: str) -> None:
    with pytest.raises(ValueError, match="expected host:port or :port"):
        bind_address(value)
