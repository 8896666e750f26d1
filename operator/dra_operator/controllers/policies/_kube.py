"""`PolicyStatusWriter` over the API server: one merge patch of `allocationpolicies/status`.

A JSON merge patch replaces lists whole, so the conditions written are exactly the two the
operator computed. No precondition: only the leader writes these statuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_operator import kube


class KubePolicyStatusWriter:
    """Implements `PolicyStatusWriter`."""

    def __init__(self, api: kube.Client) -> None:
        self._api = api

    async def write_status(self, name: str, status: Mapping[str, Any]) -> None:
        await self._api.patch(
            kube.ALLOCATION_POLICIES, name, {"status": dict(status)}, subresource="status"
        )
