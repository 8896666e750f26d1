"""Reading a whole collection in pages, and waiting between attempts, the way client-go does.

`list_all` is client-go's pager (`tools/pager`): LIST with `limit`, then again with each
`continue` token until none is left, so that one response never holds a whole large cluster.
The resourceVersion is the first page's: the later pages are served from that same snapshot.

`Backoff` is client-go's `wait.Backoff` as its reflector and leader election use it: a delay
that doubles after each failure up to a cap, and starts over after a success.
"""

from __future__ import annotations

import asyncio
from typing import Final, NamedTuple

from dra_operator.kube._client import Client, JSONObject
from dra_operator.kube._resources import Resource

__all__ = ["PAGE_SIZE", "Backoff", "Listing", "list_all"]

PAGE_SIZE: Final = 500
"""client-go's pager default (`defaultPageSize`)."""


class Listing(NamedTuple):
    items: list[JSONObject]
    resource_version: str
    """Of the snapshot the pages were read from ("" when the server gave none)."""


async def list_all(
    api: Client, resource: Resource, *, namespace: str | None = None, page: int = PAGE_SIZE
) -> Listing:
    """Every object of `resource` (in `namespace`, or all), read in pages of `page`."""
    items: list[JSONObject] = []
    token: str | None = None
    version = ""
    while True:
        listed = await api.list(resource, namespace=namespace, limit=page, continue_token=token)
        items.extend(listed.get("items") or ())
        metadata = listed.get("metadata") or {}
        if token is None:
            version = str(metadata.get("resourceVersion") or "")
        token = metadata.get("continue") or None
        if token is None:
            return Listing(items, version)


class Backoff:
    """`first` seconds, doubling after each `wait` up to `maximum`; `reset` after a success."""

    def __init__(self, first: float, maximum: float) -> None:
        self.first = first
        self.maximum = maximum
        self.delay = first  # what the next `wait` sleeps

    def reset(self) -> None:
        self.delay = self.first

    async def wait(self) -> None:
        await asyncio.sleep(self.delay)
        self.delay = min(self.delay * 2, self.maximum)
