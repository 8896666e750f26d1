"""`dra-operator classic-driver` is wired: listed, and its options are the documented ones
(docs/cli.md, docs/classic.md); what the driver does is tested in e2e/test_classic.py."""

from __future__ import annotations

from click.testing import CliRunner

from dra_operator.cli import main


def test_the_subcommand_is_listed_with_its_options() -> None:
    listed = CliRunner().invoke(main, ["--help"])
    assert listed.exit_code == 0 and "classic-driver" in listed.output
    result = CliRunner().invoke(main, ["classic-driver", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--driver", "--nodes", "--namespace", "--no-reserve", "--kubeconfig"):
        assert option in result.output


def test_driver_and_nodes_are_required() -> None:
    result = CliRunner().invoke(main, ["classic-driver", "--nodes", "n1"])
    assert result.exit_code == 2
    assert "--driver" in result.output
