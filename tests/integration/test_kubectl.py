"""The built kubectl sees the DRA API of the local control plane (issue 2 acceptance)."""

from __future__ import annotations

import subprocess

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
