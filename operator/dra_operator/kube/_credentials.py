"""Credentials that expire: an `exec` plugin's token, or an auth provider's.

A token is kept until its expiry (the plugin's `expirationTimestamp`) or until the server
rejects it (a 401 calls `invalidate`), then fetched again, once, however many requests wait
for it: client-go's exec authenticator behaves the same way. Without an expiry the token is
kept until a 401, as client-go does, rather than running the plugin for every request.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
from collections.abc import Awaitable, Callable

__all__ = ["Credentials", "Token"]

_SKEW = datetime.timedelta(seconds=10)
"""Refresh this long before the expiry, so that a request in flight does not carry a token
that expires on its way."""


@dataclasses.dataclass(frozen=True, slots=True)
class Token:
    """One fetched credential: the Authorization header value and when it stops working."""

    header: str | None
    expiry: datetime.datetime | None = None

    def expired(self) -> bool:
        if self.expiry is None:
            return False
        return datetime.datetime.now(datetime.UTC) >= self.expiry - _SKEW


class Credentials:
    """A cached token and the coroutine that fetches a fresh one."""

    def __init__(self, fetch: Callable[[], Awaitable[Token]], first: Token) -> None:
        self._fetch = fetch
        self._token: Token | None = first
        self._lock: asyncio.Lock | None = None
        self.fetches = 1
        """How many times a token was fetched (the first one at load time included)."""

    async def authorization(self) -> str | None:
        """The Authorization header to send now, fetched again when expired or rejected."""
        token = self._token
        if token is not None and not token.expired():
            return token.header
        if self._lock is None:
            self._lock = asyncio.Lock()  # created in the loop that uses it
        async with self._lock:
            token = self._token
            if token is None or token.expired():
                token = self._token = await self._fetch()
                self.fetches += 1
        return token.header

    def invalidate(self) -> None:
        """The server rejected the token (401): fetch a new one for the next request."""
        self._token = None
