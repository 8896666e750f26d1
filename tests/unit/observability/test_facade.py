"""The observability facade: a sorted __all__ that lists exactly its public names.

Sorted as ruff's RUF022 sorts it (isort-style): constants, then classes, then functions.
Importing it leaves aiohttp out: the CLI configures logging for every command, and only the
ones that serve probes should pay for the HTTP server.
"""

import subprocess
import sys

import dra_operator.observability as observability


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name


def test_all_is_sorted() -> None:
    assert observability.__all__ == sorted(observability.__all__, key=_isort_key)


def test_all_matches_the_public_names() -> None:
    public = {name for name in vars(observability) if not name.startswith("_")}
    assert set(observability.__all__) == public


def test_importing_the_package_does_not_import_aiohttp() -> None:
    code = "import sys, dra_operator.observability; sys.exit('aiohttp' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
