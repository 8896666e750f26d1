"""Builders shared by the driver's unit tests: an inventory of one node and claims allocated
from it, and the claim-reader seam the Preparer reads them through."""

from __future__ import annotations

from typing import Any

from dra_operator.driver import Inventory, parse_inventory
from dra_operator.errors import APINotFoundError

DRIVER = "sim.example.com"
NODE = "node-a"


def inventory() -> Inventory:
    devices = [
        {"name": "gpu-0"},
        {"name": "gpu-1"},
        {"name": "nic-0", "allowMultipleAllocations": True},
    ]
    return parse_inventory(
        [{"spec": {"driver": DRIVER, "devices": devices}}], node=NODE, driver=DRIVER
    )


def allocated_claim(
    name: str,
    results: list[dict[str, Any]],
    config: list[dict[str, Any]] | None = None,
    *,
    allocated: bool = True,
) -> dict[str, Any]:
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": []}},
        "status": {},
    }
    if allocated:
        claim["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"request": "req", "driver": DRIVER, "pool": NODE, **r} for r in results
                ],
                "config": config or [],
            }
        }
    return claim


class Claims:
    """The claim reader seam: claims by (namespace, name), counting reads."""

    def __init__(self, *claims: dict[str, Any]) -> None:
        self.claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in claims}
        self.reads = 0

    async def __call__(self, namespace: str, name: str) -> dict[str, Any]:
        self.reads += 1
        try:
            return self.claims[namespace, name]
        except KeyError:
            raise APINotFoundError(404, "NotFound", f"{name} not found") from None
