"""`PoolStatusWriter` over the API server (resource.k8s.io/v1alpha3 resourcepoolstatusrequests).

The answer is a merge patch of the status subresource carrying the resourceVersion the answer
was computed from, so a request changed meanwhile is re-read rather than answered stale
(upstream's UpdateStatus is conditional the same way).
"""

from __future__ import annotations

from typing import Any

from dra_operator import kube


class KubePoolStatusWriter:
    """Implements `PoolStatusWriter`."""

    def __init__(self, api: kube.Client, resource: kube.Resource) -> None:
        self._api = api
        self._resource = resource

    async def write_status(self, name: str, resource_version: str, status: dict[str, Any]) -> None:
        body = {"metadata": {"resourceVersion": resource_version}, "status": status}
        await self._api.patch(self._resource, name, body, subresource="status")

    async def delete(self, name: str, uid: str) -> None:
        await self._api.delete(self._resource, name, uid=uid)
