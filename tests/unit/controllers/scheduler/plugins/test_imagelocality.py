"""ImageLocality: upstream's TestImageLocalityPriority arithmetic and name normalization."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, normalized_image_name
from dra_operator.controllers.scheduler.plugins import imagelocality
from dra_operator.model import Node, Pod

from .builders import FakeHandle, container, make_node, make_pod, node_info, state

Raw = dict[str, Any]
MB = 1024 * 1024


def images(*entries: tuple[list[str], int]) -> list[Raw]:
    return [{"names": names, "sizeBytes": size} for names, size in entries]


# upstream's fixtures, by the images (MB) each node holds
N403002000 = images(
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
)
N25010 = images((["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB))
N60040900 = images(
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/40:latest"], 40 * MB),
    (["gcr.io/900:latest"], 900 * MB),
)
N300600900 = images(
    (["gcr.io/300:latest"], 300 * MB),
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/900:latest"], 900 * MB),
)
N400030 = images((["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB))
N203040 = images(
    (["gcr.io/20:latest"], 20 * MB),
    (["gcr.io/30:latest"], 30 * MB),
    (["gcr.io/40:latest"], 40 * MB),
)
NO_IMAGES: list[Raw] = []


def nodes_of(*statuses: list[Raw]) -> list[Node]:
    return [make_node(f"node{i + 1}", images=s) for i, s in enumerate(statuses)]


def pod_of(*images_: str, init: tuple[str, ...] = ()) -> Pod:
    containers = [container(f"c{i}", image=im) for i, im in enumerate(images_)]
    inits = [container(f"i{i}", image=im) for i, im in enumerate(init)]
    return make_pod(containers=containers, initContainers=inits)


CASES = [
    pytest.param(
        pod_of("gcr.io/40", "gcr.io/250"),
        nodes_of(N403002000, N25010),
        [0, 5],
        id="two images spread on two nodes, prefer the larger image one",
    ),
    pytest.param(
        pod_of("gcr.io/40", "gcr.io/300"),
        nodes_of(N403002000, N25010),
        [7, 0],
        id="two images on one node, prefer this node",
    ),
    pytest.param(
        pod_of("gcr.io/10", "gcr.io/4000"),
        nodes_of(N400030, N25010),
        [100, 0],
        id="if exceed limit, use limit",
    ),
    pytest.param(
        pod_of("gcr.io/10", "gcr.io/4000"),
        nodes_of(N400030, N25010, NO_IMAGES),
        [66, 0, 0],
        id="if exceed limit, use limit (with node which has no images present)",
    ),
    pytest.param(
        pod_of("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        nodes_of(N60040900, N300600900, NO_IMAGES),
        [32, 36, 0],
        id="pod with multiple large images, node2 is preferred",
    ),
    pytest.param(
        pod_of("gcr.io/30", "gcr.io/40"),
        nodes_of(N203040, N400030),
        [1, 0],
        id="pod with multiple small images",
    ),
    pytest.param(
        pod_of("gcr.io/30", "gcr.io/300"),
        nodes_of(N300600900, N400030),
        [6, 0],
        id="same images as ImageVolume pod but as regular container images",
    ),
    pytest.param(
        pod_of("gcr.io/30", init=("gcr.io/300",)),
        nodes_of(N403002000, N203040),
        [6, 0],
        id="include InitContainers: two images spread on two nodes, prefer the larger image one",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "expected"), CASES)
def test_image_locality_priority(pod: Pod, nodes: list[Node], expected: list[int]) -> None:
    infos = [node_info(n, nodes=nodes) for n in nodes]
    plugin = imagelocality.new({}, FakeHandle(infos))
    got = []
    for info in infos:
        score, result = plugin.score(state(), pod, info)
        assert result == SUCCESS
        got.append(score)
    assert got == expected


DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param(f"root@{DIGEST}", f"root@{DIGEST}", id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


def test_the_signature_is_the_pods_images_and_the_number_of_nodes() -> None:
    two = imagelocality.new({}, FakeHandle([node_info(n) for n in nodes_of(N25010, NO_IMAGES)]))
    three = imagelocality.new(
        {}, FakeHandle([node_info(n) for n in nodes_of(N25010, NO_IMAGES, NO_IMAGES)])
    )
    signed = two.sign_pod(pod_of("gcr.io/10", init=("gcr.io/250",)))
    assert signed == two.sign_pod(pod_of("gcr.io/10", init=("gcr.io/250",)))
    assert signed != two.sign_pod(pod_of("gcr.io/10"))
    assert signed != three.sign_pod(pod_of("gcr.io/10", init=("gcr.io/250",)))
