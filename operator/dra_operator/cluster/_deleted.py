"""UIDs of objects the watch showed deleted, remembered for a while (upstream's uidCache).

It lets the claims controller drop a `reservedFor` entry of a pod it saw deleted without asking
the API server; a pod neither cached nor remembered here still needs that GET. Bounded, least
recently added first out, 500 entries like upstream's `maxUIDCacheEntries`.
"""

from __future__ import annotations

import collections


class RecentlyDeleted:
    __slots__ = ("_capacity", "_uids")

    def __init__(self, capacity: int = 500) -> None:
        self._capacity = capacity
        self._uids: collections.OrderedDict[str, None] = collections.OrderedDict()

    def add(self, uid: str) -> None:
        self._uids[uid] = None
        self._uids.move_to_end(uid)
        while len(self._uids) > self._capacity:
            self._uids.popitem(last=False)

    def __contains__(self, uid: object) -> bool:
        return uid in self._uids

    def __len__(self) -> int:
        return len(self._uids)
