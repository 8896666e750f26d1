"""Example scheduler plugin hook: a Score that prefers nodes by a label.

Load it with `dra-operator run --hook prefer_label:PreferLabel` (with this directory on
PYTHONPATH) or from a package's entry point of group `dra_operator.hooks`. It joins the
scheduler's profile as a Score plugin named `prefer_label:PreferLabel`, with weight 2: among
the nodes where a pod fits, those labelled `example.com/fast=true` score 100, the others 0.
"""

from __future__ import annotations

from dra_operator.controllers.scheduler.framework import NodeInfo
from dra_operator.model import Pod

LABEL = "example.com/fast"


class PreferLabel:
    """score: 100 on nodes labelled `example.com/fast=true`, else 0."""

    weight = 2
    timeout = 0.1

    def score(self, pod: Pod, node: NodeInfo) -> int:
        return 100 if node.node.labels.get(LABEL) == "true" else 0
