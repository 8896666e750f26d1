"""The checkpoint: which claims this driver prepared, with which devices, kept across restarts.

The kubelet calls NodeUnprepareResources for a claim prepared by an earlier run of the driver,
and expects the devices a restarted driver still holds to stay refused to other claims. So every
change is written to `<state-dir>/checkpoint.json` before the kubelet hears of it: a temporary
file in the same directory, fsynced, then renamed over the old one, so a crash leaves either the
old or the new state, never half of one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dra_operator.errors import InvalidObjectError

__all__ = ["Checkpoint", "PreparedClaim", "PreparedDevice"]

_FILE = "checkpoint.json"
_VERSION = 1


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PreparedDevice:
    """One device of a prepared claim, as returned to the kubelet."""

    requests: tuple[str, ...]
    pool: str
    device: str
    cdi_ids: tuple[str, ...]
    share_id: str | None = None
    admin_access: bool = False  # monitoring access: shares the device with any other claim


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PreparedClaim:
    """A claim this driver prepared: its identity, devices and CDI spec file."""

    uid: str
    namespace: str
    name: str
    devices: tuple[PreparedDevice, ...]
    cdi_spec: str  # path of the CDI spec file written for it

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Checkpoint:
    """The prepared claims by UID, mirrored to a file on every change."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / _FILE
        self._claims: dict[str, PreparedClaim] = {}

    @classmethod
    def load(cls, state_dir: Path) -> Checkpoint:
        """The checkpoint in `state_dir`, empty when there is none yet."""
        checkpoint = cls(state_dir)
        try:
            raw = json.loads(checkpoint.path.read_text())
        except FileNotFoundError:
            return checkpoint
        except (OSError, ValueError) as exc:
            raise InvalidObjectError("", f"unreadable: {exc}", source=str(checkpoint.path)) from exc
        if raw.get("version") != _VERSION:
            raise InvalidObjectError(
                "version",
                f"is {raw.get('version')!r}, want {_VERSION}",
                source=str(checkpoint.path),
            )
        for number, entry in enumerate(raw.get("claims", ())):
            try:
                claim = _claim(entry)
            except (KeyError, TypeError) as exc:
                raise InvalidObjectError(
                    f"claims[{number}]", f"malformed entry: {exc!r}", source=str(checkpoint.path)
                ) from exc
            checkpoint._claims[claim.uid] = claim
        return checkpoint

    def __iter__(self) -> Iterator[PreparedClaim]:
        return iter(self._claims.values())

    def get(self, uid: str) -> PreparedClaim | None:
        return self._claims.get(uid)

    def holder(self, pool: str, device: str, *, besides: str) -> PreparedClaim | None:
        """A claim other than `besides` (a UID) that holds the device for itself (not with admin
        access), if any."""
        for claim in self._claims.values():
            if claim.uid != besides and any(
                (d.pool, d.device) == (pool, device) and not d.admin_access for d in claim.devices
            ):
                return claim
        return None

    def add(self, claim: PreparedClaim) -> None:
        self._claims[claim.uid] = claim
        self._save()

    def remove(self, uid: str) -> PreparedClaim | None:
        claim = self._claims.pop(uid, None)
        if claim is not None:
            self._save()
        return claim

    def _save(self) -> None:
        doc = {
            "version": _VERSION,
            "claims": [dataclasses.asdict(c) for c in self._claims.values()],
        }
        atomic_write(self.path, json.dumps(doc, indent=1, sort_keys=True))


def atomic_write(path: Path, text: str) -> None:
    """Replace `path` by `text` in one step (temporary file, fsync, rename, fsync of the dir)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _claim(entry: Mapping[str, Any]) -> PreparedClaim:
    devices = tuple(
        PreparedDevice(
            requests=tuple(d["requests"]),
            pool=d["pool"],
            device=d["device"],
            cdi_ids=tuple(d["cdi_ids"]),
            share_id=d.get("share_id"),
            admin_access=bool(d.get("admin_access", False)),
        )
        for d in entry["devices"]
    )
    return PreparedClaim(
        uid=entry["uid"],
        namespace=entry["namespace"],
        name=entry["name"],
        devices=devices,
        cdi_spec=entry["cdi_spec"],
    )
