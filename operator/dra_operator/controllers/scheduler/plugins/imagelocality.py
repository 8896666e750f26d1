"""ImageLocality (Score): prefer nodes that already have the pod's container images.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/imagelocality. Each image present on
the node adds its size scaled by the share of nodes that have it (so an image on every node
does not pull all pods to one node); the sum, clamped between 23 MiB and 1000 MiB per
container, maps linearly to 0-100. Image names are normalized as upstream: a name without a
tag gets `:latest`. Difference: image volumes (`spec.volumes[].image`) are not counted.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from dra_operator.controllers.scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    ImageState,
    NodeInfo,
    Status,
    normalized_image_name,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "ImageLocality"

_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB


def _scaled(state: ImageState, total_nodes: int) -> int:
    return int(float(state.size) * (float(state.num_nodes) / float(total_nodes)))


def _priority(total: int, image_count: int) -> int:
    highest = MAX_CONTAINER_THRESHOLD * image_count
    clamped = total
    if total < MIN_THRESHOLD:
        clamped = MIN_THRESHOLD
    elif total > highest:
        clamped = highest
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (highest - MIN_THRESHOLD)


class ImageLocality:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable:
        """The pod's images, and the cycle's node count: the share of nodes holding an image
        moves a node's generation (its images are restated), the count of nodes does not."""
        images = tuple(c.image for c in (*pod.spec.init_containers, *pod.spec.containers))
        return images, len(self._handle.snapshot)

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        total_nodes = len(self._handle.snapshot)
        containers = (*pod.spec.init_containers, *pod.spec.containers)
        total = 0
        for c in containers:
            image = node.images.get(normalized_image_name(c.image))
            if image is not None:
                total += _scaled(image, total_nodes)
        return _priority(total, len(containers)), SUCCESS

    def score_extensions(self) -> None:
        return None


def new(args: Mapping[str, object], handle: Handle) -> ImageLocality:
    check_known(args, "args", ())
    return ImageLocality(handle)
