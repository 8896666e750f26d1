"""The server's release, read from its /version document."""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator import errors


def release_minor(version_doc: Mapping[str, object]) -> tuple[str, int]:
    """`gitVersion` and the minor from /version (`minor` may read "36+" on managed clusters)."""
    git_version = str(version_doc.get("gitVersion") or "")
    minor_text = str(version_doc.get("minor") or "").rstrip("+")
    if not minor_text.isdigit():
        parts = git_version.removeprefix("v").split(".")
        minor_text = parts[1] if len(parts) > 1 else ""
    if not minor_text.isdigit():
        raise errors.DRAOperatorError(f"server version {git_version!r}: no minor version")
    return git_version, int(minor_text)
