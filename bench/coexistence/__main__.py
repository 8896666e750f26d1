"""`python -m bench.coexistence`: violations per N races for one configuration.

    python -m bench.coexistence [--runs 20] [--routing] [--operator PATH]
                                [--operator-first] [--restart-kcm-at N]

Starts a local control plane with kube-scheduler and kube-controller-manager (leader-elected,
as kind runs them), binds the operator identity to deploy/base's ClusterRole, optionally
installs the routing policies, starts `PATH run` (default: this checkout's dra-operator; give
another checkout's to measure its behaviour) and runs the races. `--operator-first` stops
KCM and deletes its Lease before the operator starts (a KCM that has not started yet), then
starts KCM during the first race; `--restart-kcm-at N` restarts KCM during race N. Prints one
row per race and the totals.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.coexistence._race import Components, install_routing, race_once, summarize

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import LEASES, Client

_REPO = Path(__file__).resolve().parents[2]
_KCM = "kube-controller-manager"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.coexistence")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--routing", action="store_true", help="install deploy/components")
    parser.add_argument(
        "--operator",
        default=str(Path(sys.executable).with_name("dra-operator")),
        help="the dra-operator executable to run",
    )
    parser.add_argument("--operator-first", action="store_true")
    parser.add_argument("--restart-kcm-at", type=int, default=-1)
    parser.add_argument(
        "--settle-timeout", type=float, default=120.0, help="seconds before a race counts as stuck"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="coexistence-") as tmp:
        state_dir = Path(tmp) / "state"
        binaries = controlplane.find_binaries()
        state = controlplane.up(state_dir=state_dir, binaries=binaries, with_upstream=True)
        try:
            roles = controlplane.load_cluster_roles(
                _REPO / "deploy" / "base", binaries.path("kubectl")
            )
            return asyncio.run(_measure(state, roles, args, Path(tmp)))
        finally:
            controlplane.down(state_dir)


async def _measure(
    state: controlplane.ControlPlaneState,
    roles: list[dict[str, object]],
    args: argparse.Namespace,
    tmp: Path,
) -> int:
    async with Client.from_kubeconfig(state.admin_kubeconfig) as admin:
        await controlplane.bind_cluster_roles(admin, roles, controlplane.OPERATOR_USER)
        if args.routing:
            await install_routing(admin)
        components = Components(state)
        if args.operator_first:
            await components.restart(_KCM, start=False)
            with contextlib.suppress(APINotFoundError):
                await admin.delete(LEASES, _KCM, namespace="kube-system")
        log = (tmp / "operator.log").open("wb")
        operator = subprocess.Popen(
            [args.operator, "run", f"--kubeconfig={state.operator_kubeconfig}", "--workers=8"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            await _wait_leading(admin)
            results = []
            for run in range(args.runs):
                during: Callable[[], Awaitable[None]] | None = None
                if (args.operator_first and run == 0) or run == args.restart_kcm_at:
                    during = functools.partial(components.restart, _KCM)
                result = await race_once(
                    admin, run, during=during, settle_timeout=args.settle_timeout
                )
                results.append(result)
                print(
                    f"run {result.run:>2}: {result.seconds:5.1f}s bound {result.bound}"
                    f"/{result.expected_bound} devices {result.devices_used}"
                    f" over-allocated {result.overallocated}"
                    f" duplicate-claims {result.duplicate_claims}"
                    f" stale {result.stale_reservations} violations {len(result.violations)}"
                    f"{'' if result.settled else ' UNSETTLED'}",
                    flush=True,
                )
        finally:
            operator.terminate()
            operator.wait(30)
            log.close()
    for key, value in summarize(results).items():
        print(f"{key:<24} {value}")
    return 0


async def _wait_leading(admin: Client) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(APINotFoundError):
            lease = await admin.get(LEASES, "dra-operator", namespace="kube-system")
            if (lease.get("spec") or {}).get("holderIdentity"):
                return
        await asyncio.sleep(0.5)
    raise SystemExit("the operator did not take its Lease within 120 s")


if __name__ == "__main__":
    sys.exit(main())
