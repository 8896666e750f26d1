"""A pod's requests in framework units: millicores, whole units rounded up, untracked names out."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import (
    is_scalar_resource,
    non_zero_requests,
    pod_requests,
)
from dra_operator.model import parse_pod


def test_units_and_untracked_resources() -> None:
    pod = parse_pod(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "resources": {
                            "requests": {
                                "cpu": "1500m",
                                "memory": "1Ki",
                                "ephemeral-storage": "1.5",
                                "example.com/gpu": "2",
                                "hugepages-2Mi": "4Mi",
                                "pods": "3",
                                "unknown": "1",
                            }
                        },
                    }
                ]
            },
        }
    )
    assert pod_requests(pod) == {
        "cpu": 1500,
        "memory": 1024,
        "ephemeral-storage": 2,
        "example.com/gpu": 2,
        "hugepages-2Mi": 4 * 1024 * 1024,
    }


def test_non_zero_requests_default_missing_cpu_and_memory() -> None:
    pod = parse_pod(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {"name": "a"},
                    {"name": "b", "resources": {"requests": {"cpu": "0", "memory": "1Mi"}}},
                ]
            },
        }
    )
    assert non_zero_requests(pod) == {"cpu": 100, "memory": 200 * 1024 * 1024 + 1024 * 1024}
    assert pod_requests(pod) == {"cpu": 0, "memory": 1024 * 1024}


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("example.com/gpu", True),
        ("hugepages-1Gi", True),
        ("attachable-volumes-csi-x", True),
        ("kubernetes.io/batch", True),
        ("requests.example.com/x", False),
        ("cpu", False),
        ("pods", False),
    ],
)
def test_scalar_resource_names(name: str, scalar: bool) -> None:
    assert is_scalar_resource(name) is scalar
