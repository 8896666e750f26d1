"""What the scheduler's decision log costs: µs per `log_decision`, per level and format.

Run: `.venv/bin/python -m bench.decision_log`. A placement of one pod with one claim of two
devices is logged N times to /dev/null through the operator's own logging configuration.
"""

from __future__ import annotations

import timeit
from pathlib import Path

from dra_operator.allocator import CELSelectors, Features, FirstFit
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._decision import (
    ClaimWrite,
    Placement,
)
from dra_operator.controllers.scheduler._decision_log import log_decision
from dra_operator.controllers.scheduler._events import WorkKey
from dra_operator.controllers.scheduler._policies import Choice
from dra_operator.controllers.scheduler._state import Settings
from dra_operator.model import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
)
from dra_operator.observability import LogFormat, configure_logging

N = 20_000


def _placement() -> Placement:
    results = tuple(
        DeviceRequestAllocationResult(request="gpu", driver="gpu.example.com", pool="n1", device=d)
        for d in ("gpu-0", "gpu-1")
    )
    allocation = AllocationResult(devices=DeviceAllocationResult(results=results))
    write = ClaimWrite(
        key=ObjectKey("ns", "c"), uid="u", resource_version="1", allocation=allocation
    )
    return Placement(node="n1", claims=(write,), pod=ObjectKey("ns", "p"), bind=True)


def main() -> None:
    features = Features.for_kubernetes("1.36")
    settings = Settings(features=features, policy=FirstFit(), selectors=CELSelectors(features))
    choice = Choice(settings=settings, points=None)  # type: ignore[arg-type]  # never awaited
    key, placement = WorkKey("pod", "ns", "p"), _placement()
    print("| level | format | µs per decision |")
    print("|---|---|---:|")
    formats: tuple[LogFormat, ...] = ("json", "console")
    with Path("/dev/null").open("w") as sink:
        for level in ("debug", "info", "warning"):
            for fmt in formats:
                configure_logging(level, fmt, stream=sink)
                seconds = timeit.timeit(
                    lambda: log_decision(key, choice, placement, 0.001), number=N
                )
                print(f"| {level} | {fmt} | {seconds / N * 1e6:.1f} |")


if __name__ == "__main__":
    main()
