"""The built kubectl sees the DRA API of the local control plane and completes `kubectl dra`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_operator import controlplane

pytestmark = pytest.mark.controlplane


def test_kubectl_api_resources_lists_every_dra_kind(
    control_plane: controlplane.ControlPlaneState,
) -> None:
    kubectl = controlplane.find_binaries().require("kubectl")
    done = subprocess.run(
        [
            str(kubectl),
            "--kubeconfig",
            str(control_plane.admin_kubeconfig),
            "api-resources",
            "--api-group=resource.k8s.io",
            "-o",
            "name",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    names = {line.split(".", 1)[0] for line in done.stdout.split()}
    assert {
        "deviceclasses",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceslices",
        "devicetaintrules",
    } <= names


def test_kubectl_completes_the_plugin_through_kubectl_complete_dra(
    control_plane: controlplane.ControlPlaneState,
) -> None:
    """kubectl's plugin completion runs `kubectl_complete-dra` from $PATH (docs/cli.md)."""
    kubectl = controlplane.find_binaries().require("kubectl")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

    def complete(*words: str) -> list[str]:
        done = subprocess.run(
            [str(kubectl), "__complete", "dra", *words],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
            env={**os.environ, "PATH": path},
        )
        return [line.split("\t")[0] for line in done.stdout.splitlines()]

    assert complete("ex") == ["explain", ":4"]
    assert complete("explain", "") == ["pod", "claim", ":4"]
    assert complete("explain", "pod", "x", "--cont") == ["--context", ":4"]
