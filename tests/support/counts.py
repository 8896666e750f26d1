"""Repetition counts of the heavy scenarios: lean in `make test` (CI, every scenario once per
push inside its time budget), full in `make test-full` (DRA_OPERATOR_TEST_FULL=1).

The chaos suite (CHAOS_FULL) and the routing races (ROUTING_FULL) keep their own switches for
`make chaos` and `make test-routing`; `make test-full` sets all three.
"""

from __future__ import annotations

import os

FULL = os.environ.get("DRA_OPERATOR_TEST_FULL") == "1"


def scaled(lean: int, full: int) -> int:
    """`full` under DRA_OPERATOR_TEST_FULL=1 (`make test-full`), else `lean` (`make test`)."""
    return full if FULL else lean


def property_examples(full: int) -> int:
    """A property test's `max_examples`: `full` in `make test-full`, a quarter of it (at least
    10) in `make test`, so every property still runs on each push."""
    return full if FULL else max(10, full // 4)
