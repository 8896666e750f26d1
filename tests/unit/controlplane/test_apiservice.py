"""The `kubernetes` Service rules of real nodes: found again by their comment to be deleted."""

from __future__ import annotations

from dra_operator.controlplane._apiservice import _rule, rules_of

# `iptables -S` prints the rule back with its match modules spelled out and the comment quoted.
LISTING = """-P PREROUTING ACCEPT
-A PREROUTING -d 10.0.0.1/32 -i dra7004br1 -p tcp -m tcp --dport 443 -m comment --comment "dra-operator: kubernetes Service for dra7004br1" -j DNAT --to-destination 127.0.0.1:35367
-A PREROUTING -d 10.0.0.1/32 -i dra7004br2 -p tcp -m tcp --dport 443 -m comment --comment "dra-operator: kubernetes Service for dra7004br2" -j DNAT --to-destination 127.0.0.1:35367
-A PREROUTING -d 10.0.0.1/32 -i dra9999br1 -p tcp -m tcp --dport 443 -m comment --comment "dra-operator: kubernetes Service for dra9999br1" -j DNAT --to-destination 127.0.0.1:4000
"""  # noqa: E501


def test_only_the_bridges_own_rule_is_found_with_its_comment_as_one_argument() -> None:
    (rule,) = rules_of(LISTING, "dra7004br1")
    assert rule[0] == "PREROUTING"
    assert "dra-operator: kubernetes Service for dra7004br1" in rule
    assert rule[-2:] == ["--to-destination", "127.0.0.1:35367"]
    assert rules_of(LISTING, "dra7004br3") == []


def test_the_added_rule_sends_the_service_address_to_the_apiserver_on_loopback() -> None:
    rule = _rule("dra1br1", 6443)
    assert rule[rule.index("-i") + 1] == "dra1br1"
    assert rule[rule.index("-d") + 1] == "10.0.0.1/32"
    assert rule[rule.index("--dport") + 1] == "443"
    assert rule[rule.index("--to-destination") + 1] == "127.0.0.1:6443"
