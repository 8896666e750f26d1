"""When kopf finishes a LIST: the one point where a relist shows even when it returns nothing.

client-go's reflector calls `Replace` after every LIST, empty or not, and that is how an
informer forgets what was deleted while its watch was down. kopf hands its event handlers a
LIST's objects as events of type None and nothing else: a relist that finds no object (every
pod of the namespace deleted while the watch was cut, a kind that has no objects) delivers no
event at all, so the operator could neither see nor prune it. kopf does mark the end of each
listing in its own stream (`Bookmark.LISTED`, "even if there was nothing yielded"), but only
inside its watching layer, which has no public hook.

`hook_listings` wraps that layer's `continuous_watch` (the list-then-watch cycle `infinite_watch`
restarts after 410 Gone or a broken listing) so that each `Bookmark.LISTED` calls the
`listed` callback of the `ListingSettings` it runs under; watches under plain kopf settings
are untouched. kopf is pinned (constraints.txt); if those names move, `hook_listings` raises at
start-up rather than letting relists go unseen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import kopf
from kopf._cogs.clients import watching

Listed = Callable[[str, str, str | None], None]
"""Called with (API group, plural, namespace or None) when a LIST of that resource, in that
namespace or cluster-wide, has been fully delivered."""

_MARK: Final = "_dra_operator_listings"


@dataclasses.dataclass
class ListingSettings(kopf.OperatorSettings):
    """kopf's settings plus the callback `hook_listings`'s wrapper calls at the end of each LIST."""

    listed: Listed | None = None


def hook_listings() -> None:
    """Wrap kopf's list-then-watch cycle once per process (idempotent)."""
    original = watching.continuous_watch
    if getattr(original, _MARK, False):
        return
    end_of_list = watching.Bookmark.LISTED

    async def continuous_watch(
        *, settings: kopf.OperatorSettings, resource: Any, namespace: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        stream = original(settings=settings, resource=resource, namespace=namespace, **kwargs)
        async for event in stream:
            listed = getattr(settings, "listed", None)
            if event is end_of_list and listed is not None:
                listed(resource.group, resource.plural, namespace)
            yield event

    setattr(continuous_watch, _MARK, True)
    watching.continuous_watch = continuous_watch
