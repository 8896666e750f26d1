"""The registry-less images: a docker-archive that `ctr images import` accepts."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from dra_operator.controlplane import Image, build_image
from dra_operator.errors import ControlPlaneError


@pytest.fixture
def busybox(tmp_path: Path) -> Path:
    """A stand-in for busybox-static that lists two applets, as `busybox --list` does."""
    path = tmp_path / "busybox"
    path.write_text("#!/bin/sh\nprintf 'sh\\nsleep\\nbusybox\\n'\n")
    path.chmod(0o755)
    return path


def test_archive_layout(tmp_path: Path, busybox: Path) -> None:
    out = build_image(
        Image("localhost/x/y:local", ("/bin/sleep", "1")), tmp_path / "y.tar", busybox
    )
    with tarfile.open(out) as archive:
        manifest = json.load(archive.extractfile("manifest.json"))  # type: ignore[arg-type]
        (entry,) = manifest
        assert entry["RepoTags"] == ["localhost/x/y:local"]
        config = json.load(archive.extractfile(entry["Config"]))  # type: ignore[arg-type]
        layer = archive.extractfile(entry["Layers"][0]).read()  # type: ignore[union-attr]
    assert config["config"]["Cmd"] == ["/bin/sleep", "1"]
    assert config["rootfs"]["diff_ids"] == [f"sha256:{hashlib.sha256(layer).hexdigest()}"]
    with tarfile.open(fileobj=io.BytesIO(layer)) as rootfs:
        members = {m.name: m for m in rootfs.getmembers()}
    assert members["bin/busybox"].isfile()
    assert members["bin/sh"].issym() and members["bin/sh"].linkname == "busybox"
    assert "bin/sleep" in members and "tmp" in members


def test_missing_busybox_names_the_package(tmp_path: Path) -> None:
    with pytest.raises(ControlPlaneError, match="busybox-static"):
        build_image(Image("a:b", ("/bin/sh",)), tmp_path / "a.tar", tmp_path / "nope")
