"""CDI specs: how a prepared device reaches a container as environment variables.

The kubelet hands the CDI device IDs we return to the container runtime, which looks them up
in the spec files of its CDI directory and applies their container edits. A simulated device
has no device node, so its edits are environment variables naming it (docs/driver.md):

* per device, `DRA_DEVICE_<KEY>=<pool>/<device>` with `<KEY>` the device name upper-cased
  (non-alphanumerics as `_`), plus `DRA_DEVICE_<KEY>_CLAIM` (namespace/name),
  `_REQUESTS` (comma-separated), `_SHARE_ID` (for a share of a multi-allocatable device) and
  `_CONFIG` (a JSON list of the opaque parameters for this driver that apply to the device,
  class configs first, as their precedence goes);
* per claim, `DRA_DEVICES=<pool>/<device>,...` naming all the claim's devices of this driver.
  A container using several claims of one driver sees only one claim's list there (the
  runtime keeps the last value), so the per-device variables are the exact answer.

One spec file per claim (`<driver>_<claim uid>.json`, kind `<driver>/device`), written
atomically, so the runtime never reads half a spec, and removed when the claim is unprepared.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dra_operator.driver._checkpoint import atomic_write
from dra_operator.model import ConfigSource, DeviceAllocationConfiguration

__all__ = ["CDI_VERSION", "CDIDevice", "cdi_kind", "device_env", "spec_path", "write_spec"]

CDI_VERSION = "0.6.0"
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")

CDIDevice = tuple[str, list[str]]  # (CDI device name, its environment as KEY=VALUE)


def cdi_kind(driver: str) -> str:
    return f"{driver}/device"


def env_key(device: str) -> str:
    return _NOT_ALNUM.sub("_", device).upper()


def spec_path(cdi_dir: Path, driver: str, claim_uid: str) -> Path:
    return cdi_dir / f"{driver}_{claim_uid}.json"


def device_configs(
    configs: Sequence[DeviceAllocationConfiguration], driver: str, request: str
) -> list[Any]:
    """The opaque parameters for `driver` that apply to a device of `request`, in precedence
    order: class configs before claim configs, each in listed order (the later one wins).

    A config naming request `r` applies to results of `r` and of its subrequests `r/s`.
    """
    parent = request.split("/", 1)[0]
    chosen = [
        c
        for c in configs
        if c.opaque is not None
        and c.opaque.driver == driver
        and (not c.requests or request in c.requests or parent in c.requests)
    ]
    chosen.sort(key=lambda c: c.source != ConfigSource.FROM_CLASS)
    return [json.loads(c.opaque.parameters) for c in chosen if c.opaque is not None]


def device_env(
    *,
    pool: str,
    device: str,
    claim: str,
    requests: Sequence[str],
    share_id: str | None,
    config: Sequence[Any],
) -> list[str]:
    """The environment one prepared device gives a container, as KEY=VALUE strings."""
    key = f"DRA_DEVICE_{env_key(device)}"
    env = [
        f"{key}={pool}/{device}",
        f"{key}_CLAIM={claim}",
        f"{key}_REQUESTS={','.join(requests)}",
        f"{key}_CONFIG={json.dumps(list(config), separators=(',', ':'))}",
    ]
    if share_id:
        env.append(f"{key}_SHARE_ID={share_id}")
    return env


def write_spec(
    path: Path, driver: str, devices: Sequence[CDIDevice], claim_devices: Sequence[str]
) -> None:
    """Write the claim's CDI spec: `devices` with their env, `claim_devices` as DRA_DEVICES."""
    spec = {
        "cdiVersion": CDI_VERSION,
        "kind": cdi_kind(driver),
        "containerEdits": {"env": [f"DRA_DEVICES={','.join(claim_devices)}"]},
        "devices": [{"name": name, "containerEdits": {"env": env}} for name, env in devices],
    }
    atomic_write(path, json.dumps(spec, indent=1))
