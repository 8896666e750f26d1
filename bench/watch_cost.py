"""CPU per watch event: kopf's event handlers against the operator's own `Reflector`.

    .venv/bin/python -m bench.watch_cost [--pods 2000] [--rounds 2]

Starts a control plane of its own, creates `--pods` pods of workload a's shape in one
namespace, then, in turn, watches them through kopf (an `on.event` handler, the operator's kopf
settings) and through `Reflector` (LIST, then WATCH), each time with the same handler: the
pod store's `apply` (the model parse included). Each watch sees the pods LISTed (ADDED), then
a label written on every pod by a `kubectl` subprocess (MODIFIED). Prints the process CPU each
took until its handler had seen all 2 × `--pods` events, per event: what the operator spends
per pod event on the watch path alone (docs/architecture.md "Cost per pod at scale").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import kopf
from bench.scheduling import build

from dra_operator import controlplane, kube
from dra_operator.app._kopf import connection_info, kopf_settings
from dra_operator.app._reflector import Reflector
from dra_operator.cluster import POD_INDEXERS, Store
from dra_operator.model import parse_pod

Handle = Callable[[str | None, Mapping[str, Any]], None]
Watcher = Callable[[kube.ClusterConfig, str, Handle, asyncio.Event], Awaitable[None]]


class _Counter:
    """The handler both paths call: the store's apply, counting the events that changed it."""

    def __init__(self, wanted: int) -> None:
        self.store: Store[Any] = Store("Pod", parse_pod, POD_INDEXERS)
        self.seen = 0
        self.wanted = wanted
        self.done = asyncio.Event()

    def __call__(self, event_type: str | None, raw: Mapping[str, Any]) -> None:
        if self.store.apply(event_type, raw) is not None:
            self.seen += 1
        if self.seen >= self.wanted:
            self.done.set()


async def _through_kopf(
    config: kube.ClusterConfig, namespace: str, handle: Handle, stop: asyncio.Event
) -> None:
    registry = kopf.OperatorRegistry()

    async def login(**_: Any) -> kopf.ConnectionInfo:
        return await connection_info(config)

    async def on_event(event: Mapping[str, Any], **_: Any) -> None:
        handle(event.get("type"), event["object"])

    kopf.on.login(registry=registry)(login)
    kopf.on.event("", "v1", "pods", registry=registry, id="pods")(on_event)
    tasks = await kopf.spawn_tasks(
        registry=registry,
        settings=kopf_settings(),
        standalone=True,
        clusterwide=False,
        namespaces=[namespace],
        stop_flag=stop,
    )
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _through_reflector(
    config: kube.ClusterConfig, namespace: str, handle: Handle, stop: asyncio.Event
) -> None:
    def listed(items: list[Mapping[str, Any]], version: str, relisted: bool) -> None:
        for raw in items:
            handle(None, raw)

    async with kube.Client(config) as api:
        reflector = Reflector(api, kube.PODS, namespace=namespace, listed=listed, event=handle)
        task = asyncio.create_task(reflector.run())
        await stop.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _measure(
    watcher: Watcher, config: kube.ClusterConfig, namespace: str, pods: int, relabel: list[str]
) -> float:
    """Process CPU seconds until the handler has seen every pod added, then relabelled."""
    counter = _Counter(pods)
    stop = asyncio.Event()
    started = time.process_time()
    task = asyncio.create_task(watcher(config, namespace, counter, stop))
    await counter.done.wait()
    counter.wanted = 2 * pods
    counter.done.clear()
    labelled = await asyncio.create_subprocess_exec(*relabel, stdout=subprocess.DEVNULL)
    await counter.done.wait()
    spent = time.process_time() - started
    await labelled.wait()
    stop.set()
    await task
    return spent


async def _create(api: kube.Client, namespace: str, pods: int) -> None:
    await api.create(kube.NAMESPACES, {"metadata": {"name": namespace}})
    workload = build("a", 1)
    queue = list(range(pods))

    async def creator() -> None:
        while queue:
            pod = workload.pod(queue.pop(), namespace, "nobody")
            await api.create(kube.PODS, pod, namespace=namespace)

    await asyncio.gather(*(creator() for _ in range(20)))


async def _run(args: argparse.Namespace, state: controlplane.ControlPlaneState) -> None:
    config = kube.load_config(state.admin_kubeconfig)
    namespace = "watch-cost"
    async with kube.Client(config) as api:
        await _create(api, namespace, args.pods)
    kubectl = str(controlplane.find_binaries().path("kubectl"))
    watchers: dict[str, Watcher] = {"kopf": _through_kopf, "reflector": _through_reflector}
    print(f"{args.pods} pods: CPU per event (ADDED by the LIST, then MODIFIED), ms")
    for round_ in range(args.rounds):
        for name, watcher in watchers.items():
            relabel = [
                kubectl,
                f"--kubeconfig={state.admin_kubeconfig}",
                "-n",
                namespace,
                "label",
                "pods",
                "--all",
                "--overwrite",
                f"round={round_}-{name}",
            ]
            spent = await _measure(watcher, config, namespace, args.pods, relabel)
            per_event = 1000 * spent / (2 * args.pods)
            print(f"  round {round_ + 1} {name:9} {spent:6.2f} s CPU  {per_event:.3f} ms/event")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.watch_cost", description=__doc__)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    logging.getLogger("kopf").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="watch-cost-") as tmp:
        state_dir = Path(tmp)
        state = controlplane.up(state_dir=state_dir, binaries=controlplane.find_binaries())
        try:
            asyncio.run(_run(args, state))
        finally:
            controlplane.down(state_dir)


if __name__ == "__main__":
    main()
