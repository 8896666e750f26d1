"""`completion SHELL` prints a script bound to the program's name; kubectl's protocol answers
with candidates and a cobra directive (file names only where a path is wanted)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dra_operator.cli import kubectl_main, main
from dra_operator.cli._completion import kubectl_complete


@pytest.mark.parametrize(
    ("group", "prog", "variable"),
    [
        (main, "dra-operator", "_DRA_OPERATOR_COMPLETE"),
        (kubectl_main, "kubectl-dra", "_KUBECTL_DRA_COMPLETE"),
    ],
)
def test_completion_script_names_the_program(group: object, prog: str, variable: str) -> None:
    result = CliRunner().invoke(group, ["completion", "bash"], prog_name=prog)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    assert variable in result.output and "complete -o nosort -F" in result.output


def test_kubectl_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    kubectl_complete(kubectl_main, "kubectl-dra", ["explain", "claim", "x", "-o", ""])
    assert capsys.readouterr().out.splitlines() == ["table", "wide", "json", "yaml", ":4"]
    kubectl_complete(kubectl_main, "kubectl-dra", ["devices", "--kubeconfig", ""])
    assert capsys.readouterr().out.splitlines()[-1] == ":0"  # the shell completes file names
