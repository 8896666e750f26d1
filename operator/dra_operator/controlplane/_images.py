"""Container images without a registry: docker-archive tarballs built from busybox-static.

The local nodes reach no registry, so their images are made here: a root filesystem holding
one statically linked `/bin/busybox` plus a symlink per applet, as a single layer, with an
image config that names its command. `ctr images import` reads the docker-archive layout
(`manifest.json`, the config JSON, one layer tar), so that is the format written. Two images
come out of one rootfs: the test image (a shell and the usual tools) and the sandbox ("pause")
image, whose command just sleeps.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path

from dra_operator.errors import ControlPlaneError

__all__ = [
    "BUSYBOX",
    "PAUSE_IMAGE",
    "TEST_IMAGE",
    "Image",
    "build_image",
    "find_busybox",
    "local_images",
]

BUSYBOX = Path("/bin/busybox")
TEST_IMAGE = "localhost/dra-operator/busybox:local"
PAUSE_IMAGE = "localhost/dra-operator/pause:local"


@dataclasses.dataclass(frozen=True, slots=True)
class Image:
    """What to build: a reference (`name:tag`) and the command its containers run."""

    reference: str
    command: tuple[str, ...]


def local_images() -> tuple[Image, Image]:
    """The test image (a shell by default) and the sandbox image every node pins."""
    return (
        Image(TEST_IMAGE, ("/bin/sh",)),
        Image(PAUSE_IMAGE, ("/bin/sleep", "2147483647")),
    )


def find_busybox(path: Path = BUSYBOX) -> Path:
    """The static busybox (Debian's busybox-static), or an error saying how to get it."""
    if not path.is_file():
        raise ControlPlaneError(f"{path} not found: install busybox-static (make node-packages)")
    return path


def _applets(busybox: Path) -> list[str]:
    done = subprocess.run(
        [str(busybox), "--list"], capture_output=True, text=True, check=False, timeout=30
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise ControlPlaneError(f"{busybox} --list failed: {done.stderr.strip()}")
    return sorted(set(done.stdout.split()) - {"busybox"})


def _layer(busybox: Path) -> bytes:
    """The rootfs as an uncompressed tar: /bin/busybox, applet links, /tmp, /etc, /proc, ..."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ("bin", "dev", "etc", "proc", "sys", "tmp", "var", "root"):
            info = tarfile.TarInfo(directory)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if directory == "tmp" else 0o755
            tar.addfile(info)
        data = busybox.read_bytes()
        info = tarfile.TarInfo("bin/busybox")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
        for applet in _applets(busybox):
            link = tarfile.TarInfo(f"bin/{applet}")
            link.type, link.linkname, link.mode = tarfile.SYMTYPE, "busybox", 0o777
            tar.addfile(link)
        for name, text in (
            ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n"),
            ("etc/group", "root:x:0:\nnogroup:x:65534:\n"),
        ):
            body = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(body), 0o644
            tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


def _config(layer_digest: str, command: Sequence[str]) -> bytes:
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": list(command), "Env": ["PATH=/bin"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    return json.dumps(config, sort_keys=True).encode()


def build_image(image: Image, out: Path, busybox: Path | None = None) -> Path:
    """Write `image` as a docker-archive tarball at `out` (for `ctr images import`)."""
    layer = _layer(find_busybox(busybox or BUSYBOX))
    layer_hex = hashlib.sha256(layer).hexdigest()
    config = _config(f"sha256:{layer_hex}", image.command)
    config_name = f"{hashlib.sha256(config).hexdigest()}.json"
    manifest = [
        {
            "Config": config_name,
            "RepoTags": [image.reference],
            "Layers": [f"{layer_hex}/layer.tar"],
        }
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, mode="w") as tar:
        for name, body in (
            (f"{layer_hex}/layer.tar", layer),
            (config_name, config),
            ("manifest.json", json.dumps(manifest).encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(body), 0o644
            tar.addfile(info, io.BytesIO(body))
    return out
