"""Shell completion: `completion bash|zsh|fish`, and kubectl's plugin completion protocol.

`dra-operator completion bash` (or `kubectl dra completion bash`) prints the script a shell
sources; click computes the candidates. `kubectl dra <TAB>` works differently: kubectl (1.26+)
runs `kubectl_complete-dra ARGS... WORD` from $PATH and reads one candidate per line
(`value<TAB>description`), then `:<directive>` (cobra's ShellCompDirective: 4 = no file
completion, 0 = the shell's default, which completes file names).
"""

from __future__ import annotations

import sys

import click
from click.shell_completion import ShellComplete, get_completion_class

__all__ = ["command", "kubectl_complete"]

_NO_FILE_COMPLETION, _DEFAULT = 4, 0


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def command(shell: str) -> None:
    """Print the shell completion script (e.g. `source <(dra-operator completion bash)`)."""
    root = click.get_current_context().find_root()
    prog = root.info_name or "dra-operator"
    complete_var = "_{}_COMPLETE".format(prog.replace("-", "_").upper())
    completion = get_completion_class(shell)
    assert completion is not None  # the choice admits only shells click knows
    click.echo(completion(root.command, {}, prog, complete_var).source())


def kubectl_complete(group: click.Command, prog: str, argv: list[str]) -> None:
    """Answer kubectl's plugin completion call: `argv` ends with the word being completed."""
    args, incomplete = argv[:-1], argv[-1] if argv else ""
    items = ShellComplete(group, {}, prog, "").get_completions(args, incomplete)
    for item in items:
        help_text = (item.help or "").splitlines()[0] if item.help else ""
        sys.stdout.write(f"{item.value}\t{help_text}\n" if help_text else f"{item.value}\n")
    files = any(item.type in ("file", "dir") for item in items)
    sys.stdout.write(f":{_DEFAULT if files else _NO_FILE_COMPLETION}\n")
