"""docs/releases.md is exactly what `release_table.render()` makes from the code.

Regenerate with: python -m dra_operator.controlplane.release_table > docs/releases.md
"""

from __future__ import annotations

from pathlib import Path

from dra_operator.controlplane.release_table import MINORS, render

PAGE = Path(__file__).resolve().parents[3] / "docs" / "releases.md"


def test_committed_page_is_the_rendered_table() -> None:
    assert PAGE.read_text() == render(), (
        "docs/releases.md is stale: python -m dra_operator.controlplane.release_table "
        "> docs/releases.md"
    )


def test_every_release_is_a_column_and_1_37_follows_its_own_rules() -> None:
    table = render()
    header = next(line for line in table.splitlines() if line.startswith("| behaviour"))
    assert header.split(" | ")[1:] == [f"1.{m}" for m in MINORS[:-1]] + [f"1.{MINORS[-1]} |"]
    classic = " | ".join(["— (classic only)"] * 3 + ["— (classic; named resources)"])
    rules = " | ".join(["1.36"] * (len(MINORS) - 5))
    assert f"| allocator library rules (`release`) | {classic} | {rules} | 1.37 |" in table
    versions = (
        "v1alpha2 (classic) | " * 3
        + "v1alpha2 (classic, named resources) | v1alpha3 | v1beta1 | v1beta2 | v1 | v1 | v1 | v1"
    )
    assert f"| resource.k8s.io version used | {versions} |" in table
