"""`dra-operator verify` without a cluster: exit status 2 when the cluster cannot be read."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dra_operator.cli import main

UNREACHABLE = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def test_unreachable_cluster_exits_two(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE)

    outcome = CliRunner().invoke(main, ["verify", "--kubeconfig", str(kubeconfig)])

    assert outcome.exit_code == 2
    assert "cannot read the cluster" in outcome.output


def test_unusable_kubeconfig_exits_two(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")

    outcome = CliRunner().invoke(main, ["verify", "--kubeconfig", str(kubeconfig)])

    assert outcome.exit_code == 2
    assert "no context selected" in outcome.output
