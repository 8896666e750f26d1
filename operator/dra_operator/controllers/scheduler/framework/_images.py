"""The images of each node as ImageLocality scores them, with how many nodes have each one.

kube-scheduler's cache keeps these (`imageStates`, pkg/scheduler/backend/cache) and hands every
NodeInfo of a snapshot its own images with the number of nodes that have them.
"""

from __future__ import annotations

from collections.abc import Iterable

from dra_operator.controllers.scheduler.framework._nodeinfo import ImageState
from dra_operator.model import Node


def normalized_image_name(name: str) -> str:
    """`name:latest` when the name has no tag (a ':' after the last '/')."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def node_image_states(nodes: Iterable[Node]) -> dict[str, dict[str, ImageState]]:
    """Per node, its images by normalized name with their size and how many nodes have them.

    What a snapshot's `NodeInfo.images` holds (upstream's scheduler cache `imageStates`).
    """
    sizes: dict[str, dict[str, int]] = {}
    spread: dict[str, int] = {}
    for node in nodes:
        mine = sizes.setdefault(node.name, {})
        for image in node.images:
            for raw_name in image.names:
                name = normalized_image_name(raw_name)
                if name not in mine:
                    spread[name] = spread.get(name, 0) + 1
                mine[name] = image.size_bytes
    return {
        node: {name: ImageState(size, spread[name]) for name, size in images.items()}
        for node, images in sizes.items()
    }
