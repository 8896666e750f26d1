"""The FailedScheduling text: upstream's FitError histogram with the allocator's reasons."""

from __future__ import annotations

import pytest

from dra_operator.allocator import Explanation, Reason, RejectionGroup, RequestExplanation
from dra_operator.controllers.scheduler import NO_NODES, claim_failure, fit_error, prefilter_error


def _explanation(usable: int, in_use: int, needed: int = 1) -> Explanation:
    request = RequestExplanation(
        claim="default/gpu",
        request="gpu",
        considered=usable + in_use,
        usable=usable,
        needed=needed,
        rejected=(RejectionGroup(reason=Reason.IN_USE, detail="", count=in_use),) if in_use else (),
    )
    return Explanation(
        node="n1", summary="not enough usable devices", requests=(request,), pools=(), steps=3
    )


def test_claim_failure_names_the_short_request() -> None:
    assert (
        claim_failure(_explanation(0, 8))
        == "cannot allocate claim gpu (request gpu: 0/8 devices usable: 8 in use)"
    )


def test_claim_failure_without_a_short_request_uses_the_summary() -> None:
    explanation = Explanation(
        node="n1",
        summary="no combination of usable devices satisfies the constraints and requests",
        requests=(),
        pools=(),
        steps=9,
    )
    assert claim_failure(explanation) == (
        "cannot allocate all claims "
        "(no combination of usable devices satisfies the constraints and requests)"
    )


@pytest.mark.parametrize(
    ("count", "reasons", "expected"),
    [
        pytest.param(0, [], NO_NODES, id="no-nodes"),
        pytest.param(
            3,
            [
                [claim_failure(_explanation(0, 8))],
                [claim_failure(_explanation(0, 8))],
                ["node(s) had untolerated taint(s)"],
            ],
            "0/3 nodes are available: "
            "1 node(s) had untolerated taint(s), "
            "2 cannot allocate claim gpu (request gpu: 0/8 devices usable: 8 in use).",
            id="brief-example",
        ),
        pytest.param(
            2,
            [["Insufficient cpu", "node(s) were not ready"], ["Insufficient cpu"]],
            "0/2 nodes are available: 1 node(s) were not ready, 2 Insufficient cpu.",
            id="sorted-as-strings-every-reason-counted",
        ),
        pytest.param(
            1,
            [["Insufficient cpu", "Insufficient cpu"]],
            "0/1 nodes are available: 1 Insufficient cpu.",
            id="a-node-counts-a-reason-once",
        ),
    ],
)
def test_fit_error(count: int, reasons: list[list[str]], expected: str) -> None:
    assert fit_error(count, reasons) == expected


def test_prefilter_error() -> None:
    assert (
        prefilter_error(2, "request gpu: device class gpu does not exist")
        == "0/2 nodes are available: request gpu: device class gpu does not exist."
    )
