"""Fixtures of the chaos suite: operator processes, and private control planes to break."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.chaos.harness import OperatorProcess

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
