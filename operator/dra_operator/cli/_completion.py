"""Shell completion: `completion bash|zsh|fish`, and kubectl's plugin completion protocol.

`dra-operator completion bash` (or `kubectl dra completion bash`) prints the script a shell
sources; click computes the candidates. `kubectl dra <TAB>` works differently: kubectl (1.26+)
runs `kubectl_complete-dra ARGS... WORD` from $PATH and reads one candidate per line
(`value<TAB>description`), then `:<directive>` (cobra's ShellCompDirective: 4 = no file
completion, 0 = the shell's default, which completes file names). `explain pod|claim <TAB>`
completes the names of the pods or claims of the namespace, read from the cluster as the
command would (`--kubeconfig`, `--context`, `-n`); nothing when it cannot be read.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

import click
from click.shell_completion import CompletionItem, ShellComplete, get_completion_class

from dra_operator.errors import APIError, InvalidObjectError

if TYPE_CHECKING:
    from dra_operator.kube import Client

__all__ = ["command", "complete_names", "kubectl_complete"]

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


def complete_names(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The names of the pods or claims (`kind`, parsed before) starting with `incomplete`."""
    from dra_operator.cli._cluster_options import Target  # the cluster client, only here
    from dra_operator.kube import Client

    target = Target(ctx.params.get("kubeconfig"), ctx.params.get("context"))
    try:
        config = target.config()
        namespace = ctx.params.get("namespace") or config.namespace or "default"
        names = asyncio.run(_names(Client(config, timeout=5.0), ctx.params["kind"], namespace))
    except (APIError, InvalidObjectError, OSError, KeyError):
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


async def _names(api: Client, kind: str, namespace: str) -> list[str]:
    from dra_operator.kube import PODS, RESOURCE_GROUP, dra

    async with api:
        resource = PODS
        if kind == "claim":
            served = await api.served_versions(RESOURCE_GROUP)
            if not served:
                return []
            resource = dra("resourceclaims", served[0])
        items = (await api.list(resource, namespace=namespace)).get("items") or []
        return sorted(str(item["metadata"]["name"]) for item in items)
