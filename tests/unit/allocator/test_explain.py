"""Explanations: per request, what was considered and why devices were rejected, as data and
as one actionable line; pool problems; combination failures; the exhausted budget."""

from __future__ import annotations

from allocator_builders import (
    NODE1,
    Case,
    allocated_claim,
    claim,
    device,
    device_class,
    match,
    pool,
    request,
    result,
    run,
    slice_with_devices,
)

from dra_operator.allocator import Reason

GPU = "gpu.example.com"
CLASS = device_class(GPU, GPU, selectors=[f'device.attributes["{GPU}"].model == "a100"'])


def _gpus(n: int, model: str, start: int = 0):
    return [
        device(f"gpu-{i}", driver=GPU, attributes={"model": model}) for i in range(start, start + n)
    ]


def test_the_issue_example_line() -> None:
    """`request gpu: 0/16 devices usable: 12 in use, 4 rejected by selector #0 of class ...`

    The funnel checks selectors before use: the 12 devices in use match the class, the 4 free
    ones (another driver's) do not.
    """
    other = "other.example.com"
    case = Case(
        claims=[claim("claim-0", request("gpu", GPU))],
        classes=[device_class(GPU, GPU)],
        slices=[
            slice_with_devices("s", NODE1, "pool", GPU, *_gpus(12, "a100")),
            slice_with_devices(
                "t", NODE1, "pool", other, *(device(f"x-{i}", driver=other) for i in range(4))
            ),
        ],
        allocated=[allocated_claim(*(result("gpu", GPU, "pool", f"gpu-{i}") for i in range(12)))],
    )
    got = run(case)
    assert got.explanation is not None
    assert str(got.explanation.requests[0]) == (
        f"request gpu: 0/16 devices usable: 12 in use, 4 rejected by selector #0 of class {GPU}"
    )


def test_in_use_and_selector_groups_are_counted_separately() -> None:
    case = Case(
        claims=[claim("claim-0", request("gpu", GPU, 2))],
        classes=[CLASS],
        slices=[
            slice_with_devices("s", NODE1, "pool", GPU, *_gpus(3, "a100"), *_gpus(2, "h100", 3))
        ],
        allocated=[
            allocated_claim(
                result("gpu", GPU, "pool", "gpu-0"), result("gpu", GPU, "pool", "gpu-1")
            )
        ],
    )
    got = run(case)
    assert got.explanation is not None
    req = got.explanation.requests[0]
    assert (req.considered, req.usable, req.needed) == (5, 1, 2)
    assert [(g.reason, g.count) for g in req.rejected] == [
        (Reason.IN_USE, 2),
        (Reason.CLASS_SELECTOR, 2),
    ]
    assert got.explanation.lines() == [
        "not enough usable devices",
        "claim claim-0, request gpu: 1/5 devices usable (2 needed): 2 in use, "
        f"2 rejected by selector #1 of class {GPU}",
    ]


def test_incomplete_pools_are_listed() -> None:
    case = Case(
        claims=[claim("claim-0", request("gpu", GPU))],
        classes=[CLASS],
        slices=[slice_with_devices("s", NODE1, pool("pool", 2), GPU, *_gpus(1, "a100"))],
    )
    got = run(case)
    assert got.explanation is not None
    assert got.explanation.lines()[-1] == (
        f"pool {GPU}/pool: incomplete (being updated), its devices are not used"
    )


def test_combination_failures_name_the_constraint() -> None:
    case = Case(
        claims=[claim("claim-0", request("gpu", GPU, 2), constraints=[match(f"{GPU}/numa")])],
        classes=[device_class(GPU, GPU)],
        slices=[
            slice_with_devices(
                "s",
                NODE1,
                "pool",
                GPU,
                *(device(f"gpu-{i}", driver=GPU, attributes={"numa": i}) for i in range(3)),
            )
        ],
    )
    got = run(case)
    assert got.explanation is not None
    assert got.explanation.summary == (
        "no combination of usable devices satisfies the requests and the constraints of "
        f"claim claim-0 (matchAttribute {GPU}/numa)"
    )
