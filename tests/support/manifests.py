"""Render deploy/ the two ways users install it: kustomize (through kubectl) and Helm.

Both tools are binaries this repo builds from their Go modules (`make controlplane` builds
kubectl, `make helm` builds helm) into ~/.cache/dra-operator. Tests that need one skip without
it, except under CI=true, where they fail: an unbuilt tool must not pass as skipped tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CHART = DEPLOY / "helm" / "dra-operator"
NAMESPACE = "dra-operator-system"

Manifest = dict[str, Any]


def kubectl_path() -> Path:
    """The kubectl `make controlplane` builds, where the control-plane harness looks for it."""
    return controlplane.find_binaries().path("kubectl")


def helm_path() -> Path:
    """The helm `e2e/helm/build.sh` builds (its `version=` line is the pin)."""
    script = (REPO / "e2e" / "helm" / "build.sh").read_text()
    found = re.search(r"^version=(v[0-9.]+)$", script, re.MULTILINE)
    assert found, "e2e/helm/build.sh pins no helm version"
    explicit = os.environ.get("DRA_OPERATOR_HELM_CACHE")
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(explicit) if explicit else xdg / "dra-operator" / "helm"
    return cache / found.group(1) / "helm"


def require_binary(path: Path, build: str) -> Path:
    """`path` if it is built; otherwise skip (fail under CI=true) naming the make target."""
    if path.is_file() and os.access(path, os.X_OK):
        return path
    skip_or_fail(f"{path.name} not built at {path}: run `{build}`")


def _run(argv: Sequence[str | Path], env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{done.stderr}"
    return done.stdout


def parse(text: str) -> list[Manifest]:
    """The objects of a multi-document YAML stream, empty documents dropped."""
    return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]


def kustomize(kubectl: Path, directory: Path) -> str:
    return _run([kubectl, "kustomize", directory])


def helm_template(
    helm: Path, home: Path, values: Mapping[str, Any] | None = None, *extra: str
) -> str:
    """`helm template` of the chart as release `dra-operator` in dra-operator-system, CRDs
    included; Helm's config, cache and data go to `home` so no user state leaks in."""
    argv: list[str | Path] = [helm, "template", "dra-operator", CHART, "--namespace", NAMESPACE]
    argv += ["--include-crds", *extra]
    if values is not None:
        values_file = home / "values.yaml"
        # JSON is YAML that quotes every string: no `n` read back as false by Go's YAML 1.1.
        values_file.write_text(json.dumps(values))
        argv += ["--values", values_file]
    return _run(argv, env=helm_env(home))


def helm_env(home: Path) -> dict[str, str]:
    return {
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_DATA_HOME": str(home / "data"),
    }


def helm_lint(helm: Path, home: Path) -> str:
    return _run([helm, "lint", "--strict", CHART], env=helm_env(home))


def identity(manifest: Manifest) -> tuple[str, str, str]:
    """(kind, namespace, name): what makes two manifests the same object in a cluster."""
    metadata = manifest["metadata"]
    return manifest["kind"], metadata.get("namespace", ""), metadata["name"]
