"""The slice edits and rule manifests of `dra-operator taint` / `untaint`."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from dra_operator.cli import main
from dra_operator.cli._taint import rule_manifest, rule_name, taint_slice, untaint_slice

TAINT = {"key": "bad", "value": "x", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}


def _slice(*devices: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "s"}, "spec": {"devices": list(devices)}}


@pytest.mark.parametrize(
    ("devices", "device", "expected"),
    [
        pytest.param([{"name": "a"}, {"name": "b"}], "a", [[TAINT], None], id="one-device"),
        pytest.param([{"name": "a"}, {"name": "b"}], None, [[TAINT], [TAINT]], id="whole-pool"),
        pytest.param(
            [{"name": "a", "taints": [{**TAINT, "value": "old"}]}],
            "a",
            [[TAINT]],
            id="same-key-effect-replaced",
        ),
        pytest.param(
            [{"name": "a", "taints": [{**TAINT, "effect": "NoSchedule"}]}],
            "a",
            [[{**TAINT, "effect": "NoSchedule"}, TAINT]],
            id="other-effect-kept",
        ),
    ],
)
def test_taint_slice(devices: list[Any], device: str | None, expected: list[Any]) -> None:
    body = taint_slice(_slice(*devices), device, TAINT)
    assert body is not None
    assert [d.get("taints") for d in body["spec"]["devices"]] == expected


def test_taint_slice_without_the_device_changes_nothing() -> None:
    assert taint_slice(_slice({"name": "a"}), "zz", TAINT) is None


@pytest.mark.parametrize(
    ("effect", "expected"),
    [
        pytest.param(None, None, id="any-effect"),
        pytest.param("NoSchedule", [TAINT], id="only-that-effect"),
    ],
)
def test_untaint_slice(effect: str | None, expected: list[Any] | None) -> None:
    raw = _slice({"name": "a", "taints": [TAINT, {**TAINT, "effect": "NoSchedule"}]})
    body = untaint_slice(raw, "a", "bad", effect)
    assert body is not None
    assert body["spec"]["devices"][0].get("taints") == expected
    assert untaint_slice(_slice({"name": "a"}), "a", "bad", None) is None


def test_rule_manifest_and_stable_name() -> None:
    name = rule_name("d", "p", None, "bad")
    assert name == rule_name("d", "p", None, "bad") != rule_name("d", "p", "x", "bad")
    body = rule_manifest("resource.k8s.io/v1beta2", name, {"driver": "d"}, {"key": "bad"})
    assert body["spec"] == {"deviceSelector": {"driver": "d"}, "taint": {"key": "bad"}}


@pytest.mark.parametrize("name", ["taint", "untaint"])
def test_subcommands_are_registered(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "--driver" in result.output
