"""The raw-JSON client: every API call the operator makes goes through `Client`.

Why raw JSON: typed kubernetes-asyncio models drop fields they do not know, and a
read-modify-PUT through them would erase those fields on a newer server (architecture §3.1).
Objects travel as plain dicts, exactly as the server sent them.

Every call has a timeout (the client default or `timeout=`); failures surface only as
`dra_operator.errors.APIError` subclasses. What this module deliberately does not do: retry,
re-list on 410, cache, or parse objects into the model; callers decide those.

Answers and watch events are decoded with orjson: the stdlib's decoder was 4 % of the
operator's busy samples at 200 nodes, and orjson takes about half its time for the same
objects (docs/benchmarks.md, issue #32).
"""

from __future__ import annotations

import asyncio
import builtins
import enum
import json
import os
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, Self

import aiohttp
import orjson

from dra_operator.errors import APINotFoundError, ClientClosedError
from dra_operator.kube._config import ClusterConfig, load_config
from dra_operator.kube._errors import (
    error_from_response,
    error_from_status,
    error_from_transport,
)
from dra_operator.kube._resources import Resource

__all__ = ["Client", "JSONObject", "PatchType"]

JSONObject = dict[str, Any]

_TRANSPORT_ERRORS = (aiohttp.ClientError, TimeoutError, OSError, ValueError)
_WATCH_GRACE = 10.0  # seconds a watch may stay silent beyond its server-side timeout
MAX_CONNECTIONS = 25
"""Requests in flight at most (so connections for them, plus one per open watch); more calls
wait for their turn instead of opening (and handshaking) another connection. client-go keeps 25
idle connections per host; aiohttp's default of 100 let a burst of the scheduler's concurrent
writes open ~100 (5-8 % of the operator's CPU in TLS handshakes).

The turns are taken in order (`asyncio.Semaphore` is first-in, first-out), not through
aiohttp's connection limit: there a caller arriving just as a connection is freed takes it
before the waiter woken for it, so while the claims controller's 50 workers created 5,000
claims back to back, the scheduler's writes waited until the burst was over (40 s at 500
nodes)."""
KEEPALIVE_SECONDS = 60.0
"""How long an idle connection is kept for reuse: every new one costs a TLS handshake. Below
kube-apiserver's idle timeout (90 s), so that we close first and never reuse a connection the
server is closing."""


class PatchType(enum.StrEnum):
    """The four patch flavours the API server accepts, as their content types."""

    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    JSON = "application/json-patch+json"
    APPLY = "application/apply-patch+yaml"


class Client:
    """An async client for one API server and one identity.

    Use as `async with Client(config) as api:`; the HTTP session opens on entry and closes on
    exit. Methods take a `Resource` and return the server's JSON as dicts.
    """

    def __init__(
        self,
        config: ClusterConfig,
        *,
        timeout: float = 30.0,
        user_agent: str = "dra-operator",
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.config = config
        self.timeout = timeout
        self.max_connections = max_connections
        self._user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None
        self._exited = False  # left its `async with`: no session may be opened again
        self._turns = asyncio.Semaphore(max_connections)  # a new one with each session

    @classmethod
    def from_kubeconfig(
        cls, kubeconfig: str | os.PathLike[str] | None = None, *, timeout: float = 30.0
    ) -> Client:
        """A client from a kubeconfig path, $KUBECONFIG or the in-cluster service account."""
        return cls(load_config(kubeconfig), timeout=timeout)

    async def __aenter__(self) -> Self:
        self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._exited = True
        await self.close()

    def _open(self) -> aiohttp.ClientSession:
        if self._exited:
            # A task that outlived the client (a read-back, a relist's prune) would open a
            # session nobody closes; it ends here instead.
            raise ClientClosedError("the API client was closed with its `async with`")
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                ssl=self.config.ssl_context(),
                limit=0,  # `_turns` bounds the requests; a watch holds one more
                keepalive_timeout=KEEPALIVE_SECONDS,
            )
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self._user_agent}
            )
            self._turns = asyncio.Semaphore(self.max_connections)
        return self._session

    async def close(self) -> None:
        """Close the HTTP session; the client may be reopened by the next call."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- plumbing -------------------------------------------------------------------------

    async def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        authorization = await self.config.authorization()
        if authorization:
            headers["Authorization"] = authorization
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: object = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> JSONObject:
        """One HTTP call; the decoded JSON answer, or an APIError."""
        what = f"{method} {path}"
        data = None if body is None else json.dumps(body).encode()
        session = self._open()
        try:
            headers = await self._headers(content_type if data is not None else None)
            async with (
                self._turns,
                session.request(
                    method,
                    self.config.server + path,
                    params=params,
                    data=data,
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=timeout or self.timeout),
                    server_hostname=self.config.tls_server_name,
                ) as resp,
            ):
                raw = await resp.read()
                status, phrase = resp.status, resp.reason or ""
        except _TRANSPORT_ERRORS as exc:
            raise error_from_transport(exc, what) from exc
        if status >= 300:
            if status == 401:
                self.config.rejected()
            raise error_from_response(status, phrase, raw)
        try:
            decoded: JSONObject = orjson.loads(raw) if raw else {}
        except ValueError as exc:
            raise error_from_transport(exc, f"{what}: undecodable answer") from exc
        return decoded

    @staticmethod
    def _namespace(
        resource: Resource, namespace: str | None, body: Mapping[str, Any]
    ) -> str | None:
        if not resource.namespaced:
            return None
        return namespace or body.get("metadata", {}).get("namespace")

    @staticmethod
    def _object_path(
        resource: Resource, name: str, namespace: str | None, subresource: str | None
    ) -> str:
        path = resource.path(namespace=namespace, name=name)
        return f"{path}/{subresource}" if subresource else path

    # -- verbs ----------------------------------------------------------------------------

    async def get(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """Read one object (or one of its subresources)."""
        path = self._object_path(resource, name, namespace, subresource)
        return await self.request("GET", path, timeout=timeout)

    async def find(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        timeout: float | None = None,
    ) -> JSONObject | None:
        """Read one object, None when it does not exist (404); other errors are raised."""
        try:
            return await self.get(resource, name, namespace=namespace, timeout=timeout)
        except APINotFoundError:
            return None

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """List a collection (all namespaces when `namespace` is None); the raw List object."""
        params = _query(
            labelSelector=label_selector,
            fieldSelector=field_selector,
            limit=limit,
            resourceVersion=resource_version,
            **{"continue": continue_token},
        )
        path = resource.path(namespace=namespace)
        return await self.request("GET", path, params=params, timeout=timeout)

    async def create(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
        field_manager: str | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """POST a new object; with `name` and `subresource`, POST to it (`pods/binding`)."""
        ns = self._namespace(resource, namespace, body)
        if subresource is not None and name is not None:
            path = self._object_path(resource, name, ns, subresource)
        else:
            path = resource.path(namespace=ns)
        params = _query(fieldManager=field_manager)
        return await self.request("POST", path, params=params, body=body, timeout=timeout)

    async def update(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        field_manager: str | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """PUT a whole object; `metadata.resourceVersion` in `body` makes it conditional (409)."""
        ns = self._namespace(resource, namespace, body)
        path = self._object_path(resource, body["metadata"]["name"], ns, subresource)
        params = _query(fieldManager=field_manager)
        return await self.request("PUT", path, params=params, body=body, timeout=timeout)

    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """PATCH an object; JSON patch takes a list of operations, the others a dict."""
        path = self._object_path(resource, name, namespace, subresource)
        params = _query(fieldManager=field_manager, force=force)
        return await self.request(
            "PATCH", path, params=params, body=patch, content_type=patch_type, timeout=timeout
        )

    async def apply(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """Server-side apply `body` (a partial object naming itself) as `field_manager`."""
        return await self.patch(
            resource,
            body["metadata"]["name"],
            body,
            namespace=self._namespace(resource, namespace, body),
            subresource=subresource,
            patch_type=PatchType.APPLY,
            field_manager=field_manager,
            force=force,
            timeout=timeout,
        )

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        timeout: float | None = None,
    ) -> JSONObject:
        """DELETE an object, only if it still has `uid`/`resource_version` when given.

        Returns what the server answers: the object (when finalizers keep it) or a Status.
        """
        options: JSONObject = {"apiVersion": "v1", "kind": "DeleteOptions"}
        preconditions = {
            k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v
        }
        if preconditions:
            options["preconditions"] = preconditions
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        path = self._object_path(resource, name, namespace, None)
        return await self.request("DELETE", path, body=options, timeout=timeout)

    async def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        allow_bookmarks: bool = True,
        timeout_seconds: int = 300,
    ) -> AsyncIterator[JSONObject]:
        """Yield raw watch events (`{"type": ..., "object": {...}}`) until the server ends it.

        The server closes the stream after `timeout_seconds`; a silent stream is abandoned
        `_WATCH_GRACE` seconds later. An ERROR event raises its APIError (410 Expired means:
        re-list and watch from the list's resourceVersion). Close the iterator with
        `contextlib.aclosing` when leaving early.
        """
        params = _query(
            watch="true",
            labelSelector=label_selector,
            fieldSelector=field_selector,
            resourceVersion=resource_version,
            allowWatchBookmarks=allow_bookmarks or None,
            timeoutSeconds=timeout_seconds,
        )
        path = resource.path(namespace=namespace)
        what = f"WATCH {path}"
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.timeout, sock_read=timeout_seconds + _WATCH_GRACE
        )
        try:
            headers = await self._headers()
            async with self._open().get(
                self.config.server + path,
                params=params,
                headers=headers,
                timeout=timeout,
                server_hostname=self.config.tls_server_name,
            ) as resp:
                if resp.status >= 300:
                    if resp.status == 401:
                        self.config.rejected()
                    raise error_from_response(resp.status, resp.reason or "", await resp.read())
                async for event in _json_lines(resp):
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise error_from_status(
                            int(status.get("code") or 500),
                            str(status.get("reason") or ""),
                            str(status.get("message") or ""),
                        )
                    yield event
        except _TRANSPORT_ERRORS as exc:
            raise error_from_transport(exc, what) from exc

    # -- discovery ------------------------------------------------------------------------

    async def server_version(self, *, timeout: float | None = None) -> JSONObject:
        """The server's /version document (`gitVersion`, `major`, `minor`, ...)."""
        return await self.request("GET", "/version", timeout=timeout)

    async def served_versions(
        self, group: str, *, timeout: float | None = None
    ) -> builtins.list[str]:
        """The versions of `group` the server serves, preferred first; [] if none."""
        try:
            doc = await self.request("GET", f"/apis/{group}", timeout=timeout)
        except APINotFoundError:
            return []
        preferred = doc.get("preferredVersion", {}).get("version")
        versions = [v["version"] for v in doc.get("versions", [])]
        return sorted(versions, key=lambda v: v != preferred)

    async def api_resources(
        self, group: str, version: str, *, timeout: float | None = None
    ) -> builtins.list[JSONObject]:
        """The APIResource entries one group version serves (subresources included)."""
        root = f"/apis/{group}/{version}" if group else f"/api/{version}"
        doc = await self.request("GET", root, timeout=timeout)
        resources: builtins.list[JSONObject] = doc.get("resources", [])
        return resources


def _query(**params: object) -> dict[str, str]:
    """Query parameters without the unset ones; booleans as the server spells them."""
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


async def _json_lines(resp: aiohttp.ClientResponse) -> AsyncIterator[JSONObject]:
    # Split on newlines ourselves: aiohttp's line reader caps a line at 128 KiB, and one
    # ResourceSlice event can be larger than that.
    buffer = b""
    async for chunk in resp.content.iter_any():
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            line, buffer = buffer[:end].strip(), buffer[end + 1 :]
            if line:
                yield orjson.loads(line)
    if buffer.strip():
        yield orjson.loads(buffer)
