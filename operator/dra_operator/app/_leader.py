"""Leader election with a coordination.k8s.io Lease, over our raw client (rule 7).

client-go's algorithm, written for `kube.Client` (kubernetes_asyncio's elector needs its typed
client, whose models we do not use): a candidate reads the Lease; it may take it when nobody
holds it, when it holds it already, or when the holder has not renewed for `lease_duration`
as measured on *our* clock from the moment we last saw the record change (so clock skew between
replicas does not matter). Every take or renewal is an update with the read resourceVersion, so
two candidates never both win. The leader renews every `retry_period`; when renewals keep
failing for `renew_deadline` it stops leading before its Lease can expire for the others.
On a clean shutdown the leader releases the Lease (empty holder) so a follower takes over at
once instead of after `lease_duration`.
"""

from __future__ import annotations

import asyncio
import datetime
import random
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from dra_operator import errors, kube
from dra_operator.app._settings import LeaderElection
from dra_operator.observability import LogEvent, get_logger

_log = get_logger(__name__)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseElector:
    """Runs `lead()` while this identity holds the Lease; see the module docstring."""

    def __init__(self, api: kube.Client, config: LeaderElection, identity: str) -> None:
        self._api = api
        self._config = config
        self.identity = identity
        self._observed: tuple[str, str, str] | None = None  # holder, renewTime, resourceVersion
        self._observed_at = 0.0
        self._lease: dict[str, Any] | None = None
        self.is_leader = False

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Campaign, lead, and campaign again after losing; returns only if `lead` returns."""
        try:
            while True:
                await self._acquire()
                _log.info(LogEvent.LEADER_ACQUIRED, identity=self.identity, lease=self._config.name)
                leading = asyncio.create_task(lead(), name="leading")
                renewing = asyncio.create_task(self._keep_renewing(), name="renewing")
                try:
                    done, _ = await asyncio.wait(
                        {leading, renewing}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    self.is_leader = False
                    for task in (leading, renewing):
                        task.cancel()
                    await asyncio.gather(leading, renewing, return_exceptions=True)
                if leading in done:
                    leading.result()  # re-raise what stopped the controllers
                    return
                _log.warning(LogEvent.LEADER_LOST, identity=self.identity, lease=self._config.name)
        finally:
            # Not shielded: the caller awaits us after cancelling, and closes the client after.
            if self._holds():
                await self._release()

    def _holds(self) -> bool:
        return self._observed is not None and self._observed[0] == self.identity

    async def _acquire(self) -> None:
        while not await self.try_acquire_or_renew():
            await asyncio.sleep(self._config.retry_period * (1 + random.random() * 0.2))
        self.is_leader = True

    async def _keep_renewing(self) -> None:
        loop = asyncio.get_running_loop()
        last_renewed = loop.time()
        while True:
            await asyncio.sleep(self._config.retry_period)
            if await self.try_acquire_or_renew():
                last_renewed = loop.time()
            elif loop.time() - last_renewed >= self._config.renew_deadline:
                return

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the Lease afterwards. API errors count as False."""
        config = self._config
        try:
            lease = await self._api.get(kube.LEASES, config.name, namespace=config.namespace)
        except errors.APINotFoundError:
            return await self._write(None)
        except errors.APIError as exc:
            _log.warning(LogEvent.LEADER_READ_FAILED, error=str(exc))
            return False
        self._observe(lease)
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.identity and not self._expired(spec):
            return False
        return await self._write(lease)

    def _observe(self, lease: Mapping[str, Any]) -> None:
        spec = lease.get("spec") or {}
        record = (
            str(spec.get("holderIdentity") or ""),
            str(spec.get("renewTime") or ""),
            str(lease["metadata"].get("resourceVersion") or ""),
        )
        if record != self._observed:
            self._observed = record
            self._observed_at = asyncio.get_running_loop().time()

    def _expired(self, spec: Mapping[str, Any]) -> bool:
        duration = float(spec.get("leaseDurationSeconds") or self._config.lease_duration)
        return asyncio.get_running_loop().time() > self._observed_at + duration

    async def _write(self, lease: Mapping[str, Any] | None) -> bool:
        config = self._config
        now = _now()
        spec: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(config.lease_duration),
            "renewTime": now,
        }
        try:
            if lease is None:
                spec |= {"acquireTime": now, "leaseTransitions": 0}
                body = {
                    "apiVersion": kube.LEASES.api_version,
                    "kind": "Lease",
                    "metadata": {"name": config.name, "namespace": config.namespace},
                    "spec": spec,
                }
                answer = await self._api.create(kube.LEASES, body)
            else:
                old = lease.get("spec") or {}
                transitions = int(old.get("leaseTransitions") or 0)
                if old.get("holderIdentity") == self.identity:
                    spec |= {"acquireTime": old.get("acquireTime") or now}
                else:
                    spec |= {"acquireTime": now, "leaseTransitions": transitions + 1}
                body = {**lease, "spec": {**old, **spec}}
                answer = await self._api.update(kube.LEASES, body)
        except errors.APIError as exc:
            if not isinstance(exc, errors.APIConflictError):
                _log.warning(LogEvent.LEADER_WRITE_FAILED, error=str(exc))
            return False
        self._observe(answer)
        self._lease = answer
        return True

    async def _release(self) -> None:
        """Hand the Lease back (empty holder, 1 s duration), as client-go's ReleaseOnCancel."""
        if self._lease is None:
            return
        config = self._config
        try:
            # Read again: a renewal cancelled in flight may have changed it on the server.
            lease = await self._api.get(
                kube.LEASES, config.name, namespace=config.namespace, timeout=5.0
            )
        except errors.APIError as exc:
            _log.warning(LogEvent.LEADER_RELEASE_FAILED, error=str(exc))
            return
        if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
            return
        spec = {
            **(lease.get("spec") or {}),
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "renewTime": _now(),
        }
        try:
            await self._api.update(kube.LEASES, {**lease, "spec": spec}, timeout=5.0)
        except errors.APIError as exc:
            _log.warning(LogEvent.LEADER_RELEASE_FAILED, error=str(exc))
        else:
            _log.info(LogEvent.LEADER_RELEASED, identity=self.identity, lease=self._config.name)
        self._lease = None
        self._observed = None
