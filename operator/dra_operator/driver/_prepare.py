"""Prepare and unprepare claims: the decisions behind the kubelet's two DRA calls.

Preparing a claim reads it from the API (the kubelet sends only namespace, name and UID),
takes the allocation results of this driver, checks each device against the inventory and the
checkpoint, writes the claim's CDI spec, records the claim in the checkpoint and returns the
devices with their CDI IDs. Decisions are made one claim at a time under a lock, so two claims
racing for one device cannot both pass the in-use check.

A device already prepared for another claim is refused unless it allows multiple allocations
or one of the two has admin access (which upstream lets share any device):
an allocator (ours, kube-scheduler, or both at once, coexistence.md) may hand one device to two
claims, and upstream asks drivers to catch that here. Each refusal is counted by reason
(`DriverMetrics.prepare_errors`) and logged as one `driver.prepare_refused` event.

Unpreparing removes the CDI spec and the checkpoint entry; a claim we never prepared (or
already unprepared) is success, as the kubelet retries calls whose answer it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from dra_operator.driver._cdi import (
    CDIDevice,
    cdi_kind,
    device_configs,
    device_env,
    spec_path,
    write_spec,
)
from dra_operator.driver._checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from dra_operator.driver._events import DriverEvent
from dra_operator.driver._inventory import Inventory
from dra_operator.driver._metrics import DriverMetrics
from dra_operator.errors import APIError, APINotFoundError, InvalidObjectError
from dra_operator.model import DeviceRequestAllocationResult, ResourceClaim, parse_resource_claim
from dra_operator.observability import get_logger

__all__ = ["ClaimReader", "PrepareError", "Preparer", "RefusalReason"]

ClaimReader = Callable[[str, str], Awaitable[dict[str, Any]]]
"""Reads a claim's raw JSON by (namespace, name); raises APIError."""

_log = get_logger(__name__)


class RefusalReason(enum.StrEnum):
    """Why a claim was not prepared: the `reason` label of the refusal counter."""

    CLAIM_NOT_FOUND = "claim_not_found"
    CLAIM_UNREADABLE = "claim_unreadable"
    UID_MISMATCH = "uid_mismatch"
    NOT_ALLOCATED = "not_allocated"
    FOREIGN_POOL = "foreign_pool"
    UNKNOWN_DEVICE = "unknown_device"
    DEVICE_IN_USE = "device_in_use"
    WRITE_FAILED = "write_failed"


class PrepareError(Exception):
    """A claim cannot be prepared; the message goes to the kubelet (and the pod's events)."""

    def __init__(self, reason: RefusalReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Preparer:
    """Prepares claims for one driver on one node; see the module docstring."""

    def __init__(
        self,
        inventory: Inventory,
        checkpoint: Checkpoint,
        cdi_dir: Path,
        read_claim: ClaimReader,
        metrics: DriverMetrics,
    ) -> None:
        self.inventory = inventory
        self.checkpoint = checkpoint
        self.cdi_dir = cdi_dir
        self.read_claim = read_claim
        self.metrics = metrics
        self._lock = asyncio.Lock()

    async def prepare(self, namespace: str, name: str, uid: str) -> PreparedClaim:
        """The claim's prepared devices, preparing them now if needed; PrepareError if not."""
        key = f"{namespace}/{name}"
        async with self._lock:
            known = self.checkpoint.get(uid)
            try:
                prepared = known or await self._prepare(namespace, name, uid)
            except PrepareError as exc:
                self.metrics.prepare_errors.labels(reason=exc.reason).inc()
                _log.warning(
                    DriverEvent.PREPARE_REFUSED,
                    claim=key,
                    uid=uid,
                    reason=exc.reason,
                    error=str(exc),
                )
                raise
            self.metrics.prepared_claims.set(len(list(self.checkpoint)))
        _log.info(
            DriverEvent.PREPARED,
            claim=key,
            uid=uid,
            devices=[f"{d.pool}/{d.device}" for d in prepared.devices],
            again=known is not None,
        )
        return prepared

    def unprepare(self, uid: str, namespace: str = "", name: str = "") -> None:
        """Forget the claim and remove its CDI spec; unknown claims are already unprepared."""
        claim = self.checkpoint.get(uid)
        if claim is not None:
            Path(claim.cdi_spec).unlink(missing_ok=True)
            self.checkpoint.remove(uid)
        self.metrics.prepared_claims.set(len(list(self.checkpoint)))
        _log.info(
            DriverEvent.UNPREPARED, claim=f"{namespace}/{name}", uid=uid, known=claim is not None
        )

    async def _prepare(self, namespace: str, name: str, uid: str) -> PreparedClaim:
        claim = await self._read(namespace, name, uid)
        allocation = claim.status.allocation
        if allocation is None:
            raise PrepareError(
                RefusalReason.NOT_ALLOCATED, f"claim {claim_key(claim)}: not allocated"
            )
        driver = self.inventory.driver
        results = [r for r in allocation.devices.results if r.driver == driver]
        for result in results:
            self._check_device(claim, result)
        by_device: list[tuple[DeviceRequestAllocationResult, str]] = [
            (r, f"{uid}-{i}-{r.device}") for i, r in enumerate(results)
        ]
        cdi_devices: list[CDIDevice] = [
            (
                cdi_name,
                device_env(
                    pool=r.pool,
                    device=r.device,
                    claim=claim_key(claim),
                    requests=[r.request],
                    share_id=r.share_id,
                    config=device_configs(allocation.devices.config, driver, r.request),
                ),
            )
            for r, cdi_name in by_device
        ]
        path = spec_path(self.cdi_dir, driver, uid)
        prepared = PreparedClaim(
            uid=uid,
            namespace=namespace,
            name=name,
            devices=tuple(
                PreparedDevice(
                    # The kubelet matches these against the top-level request names containers
                    # reference, so a subrequest result "req/sub" serves "req" (as upstream's
                    # kubelet plugin helper strips it).
                    requests=(r.request.split("/", 1)[0],),
                    pool=r.pool,
                    device=r.device,
                    cdi_ids=(f"{cdi_kind(driver)}={cdi_name}",),
                    share_id=r.share_id,
                    admin_access=bool(r.admin_access),
                )
                for r, cdi_name in by_device
            ),
            cdi_spec=str(path),
        )
        try:
            write_spec(path, driver, cdi_devices, [f"{r.pool}/{r.device}" for r in results])
            self.checkpoint.add(prepared)
        except OSError as exc:
            with contextlib.suppress(OSError):  # a spec without a checkpoint entry is a leak
                path.unlink()
            raise PrepareError(
                RefusalReason.WRITE_FAILED, f"claim {claim_key(claim)}: writing state: {exc}"
            ) from exc
        return prepared

    async def _read(self, namespace: str, name: str, uid: str) -> ResourceClaim:
        key = f"{namespace}/{name}"
        try:
            claim = parse_resource_claim(await self.read_claim(namespace, name))
        except APINotFoundError as exc:
            raise PrepareError(RefusalReason.CLAIM_NOT_FOUND, f"claim {key}: not found") from exc
        except (APIError, InvalidObjectError) as exc:
            raise PrepareError(
                RefusalReason.CLAIM_UNREADABLE, f"claim {key}: cannot read it: {exc}"
            ) from exc
        if claim.metadata.uid != uid:
            raise PrepareError(
                RefusalReason.UID_MISMATCH,
                f"claim {key}: has UID {claim.metadata.uid}, the kubelet asked for {uid}",
            )
        return claim

    def _check_device(self, claim: ResourceClaim, result: DeviceRequestAllocationResult) -> None:
        where = f"claim {claim_key(claim)}, request {result.request}"
        if result.pool != self.inventory.pool:
            raise PrepareError(
                RefusalReason.FOREIGN_POOL,
                f"{where}: device {result.pool}/{result.device} is not in pool "
                f"{self.inventory.pool} of node {self.inventory.node}",
            )
        device = self.inventory.devices.get(result.device)
        if device is None:
            raise PrepareError(
                RefusalReason.UNKNOWN_DEVICE,
                f"{where}: device {result.pool}/{result.device} is not published by this driver",
            )
        if device.allow_multiple_allocations or result.admin_access:
            return
        holder = self.checkpoint.holder(result.pool, result.device, besides=claim.metadata.uid)
        if holder is not None:
            raise PrepareError(
                RefusalReason.DEVICE_IN_USE,
                f"{where}: device {result.pool}/{result.device} is already prepared for claim "
                f"{holder.key} (uid {holder.uid}); refusing to give one device to two claims",
            )


def claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"
