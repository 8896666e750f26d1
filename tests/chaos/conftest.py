"""Fixtures of the chaos suite: operator processes, and clients of the private control plane
(`plane`) that a module defines when it breaks the control plane itself."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from tests.chaos.harness import OperatorProcess

from dra_operator import controlplane
from dra_operator.kube import Client

Operators = Callable[[Path, str], OperatorProcess]


@pytest.fixture
def operators(tmp_path: Path) -> Iterator[Operators]:
    """A factory of `OperatorProcess`es; every process is stopped after the test."""
    made: list[OperatorProcess] = []

    def make(kubeconfig: Path, namespace: str) -> OperatorProcess:
        made.append(OperatorProcess(kubeconfig, namespace, tmp_path))
        return made[-1]

    yield make
    for group in made:
        group.stop_all()


@pytest.fixture(scope="module")
async def admin(plane: controlplane.ControlPlaneState) -> AsyncIterator[Client]:
    """`admin` of the module's own control plane (exempt from API priority and fairness)."""
    async with Client.from_kubeconfig(plane.admin_kubeconfig, timeout=10.0) as api:
        yield api
