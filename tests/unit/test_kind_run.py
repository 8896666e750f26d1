"""e2e/kind/run.sh drives docker, kind, kubectl and pytest in the right order.

There is no Docker here, so the script runs against stand-ins on PATH that record their
arguments (and can be told to fail); the real tools are exercised by people with Docker.

Aspects covered: the whole sequence for a release (cluster from its config, image built and
loaded, CRDs before deploy/ and the routing policies (the overlay from 1.36, the refusing
policy alone before), rollout waited for, the e2e suite run with the cluster's
KUBECONFIG and told the operator is deployed, cluster deleted); --keep, --no-build with
--image, reusing an existing cluster; a failing step still deletes the cluster; unknown
releases and arguments are refused before anything runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.support.manifests import REPO

RUN = REPO / "e2e" / "kind" / "run.sh"
VERSION = "0.1.0"

# Each stand-in appends "<tool> <args>" to $CALLS; FAIL_ON=<word> makes the call whose
# arguments contain <word> fail. `kind get clusters` lists $EXISTING.
_STAND_IN = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >>"$CALLS"
if [ -n "${FAIL_ON:-}" ] && [[ " $* " == *" $FAIL_ON "* ]]; then exit 1; fi
if [ "$(basename "$0")" = kind ] && [ "$1 $2" = "get clusters" ]; then echo "${EXISTING:-}"; fi
if [ "$(basename "$0")" = kind ] && [ "$1 $2" = "get kubeconfig" ]; then echo "apiVersion: v1"; fi
if [ "$(basename "$0")" = pytest ]; then
  echo "pytest-env KUBECONFIG=$KUBECONFIG OPERATOR=$DRA_OPERATOR_E2E_OPERATOR" >>"$CALLS"
fi
exit 0
"""


def _run(
    tmp_path: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("docker", "kind", "kubectl", "pytest"):
        stand_in = bin_dir / tool
        stand_in.write_text(_STAND_IN)
        stand_in.chmod(0o755)
    calls = tmp_path / "calls"
    calls.write_text("")
    done = subprocess.run(
        ["bash", str(RUN), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "HOME": str(tmp_path),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "CALLS": str(calls),
            "DRA_OPERATOR_E2E_PYTEST": str(bin_dir / "pytest"),
            **env,
        },
    )
    return done, calls.read_text().splitlines()


def _tool_calls(calls: list[str]) -> list[str]:
    """The calls with the repository path and temporary paths made readable."""
    return [line.replace(str(REPO), "REPO") for line in calls if not line.startswith("pytest-env")]


def test_full_run_creates_installs_tests_and_deletes(tmp_path: Path) -> None:
    done, calls = _run(tmp_path, "--k8s", "1.35", "--", "-k", "taint")
    image = f"dra-operator:{VERSION}"
    tools = _tool_calls(calls)

    assert done.returncode == 0, done.stderr
    assert tools[0] == "kind get clusters"
    assert tools[1] == (
        "kind create cluster --name dra-operator-1-35 "
        "--config REPO/e2e/kind/kind-1.35.yaml --wait 180s"
    )
    assert tools[2] == "kind get kubeconfig --name dra-operator-1-35"
    assert tools[3].startswith(f"docker build --tag {image} --build-arg VERSION={VERSION} ")
    assert tools[3].endswith(" REPO")
    assert tools[4] == f"kind load docker-image {image} --name dra-operator-1-35"
    assert tools[5] == "kubectl apply --server-side -k REPO/crds"
    assert tools[6].startswith("kubectl wait --for=condition=Established")
    assert tools[7] == "kubectl apply --server-side -k REPO/deploy"
    # Before 1.36 there is no MutatingAdmissionPolicy by default: only the refusing policy.
    assert tools[8] == (
        "kubectl apply --server-side -f REPO/deploy/components/require-scheduler/policy.yaml"
    )
    assert (
        tools[9]
        == f"kubectl -n dra-operator-system set image deployment/dra-operator operator={image}"
    )
    assert tools[10].startswith(
        "kubectl -n dra-operator-system rollout status deployment/dra-operator"
    )
    assert tools[11] == "pytest -p no:cacheprovider REPO/e2e -k taint"
    assert tools[12] == "kind delete cluster --name dra-operator-1-35"
    assert len(tools) == 13


def test_from_136_the_routing_overlay_is_installed(tmp_path: Path) -> None:
    done, calls = _run(tmp_path, "--k8s", "1.36")
    tools = _tool_calls(calls)

    assert done.returncode == 0, done.stderr
    assert "kubectl apply --server-side -k REPO/deploy/beside-kube-scheduler" in tools
    assert "kubectl apply --server-side -k REPO/deploy" not in tools
    (env,) = [line for line in calls if line.startswith("pytest-env")]
    assert env.endswith("/kubeconfig OPERATOR=deployed")


def test_keep_reuse_and_prebuilt_image(tmp_path: Path) -> None:
    done, calls = _run(
        tmp_path,
        "--keep",
        "--no-build",
        "--image",
        "registry.example.com/op:dev",
        "--name",
        "mine",
        EXISTING="mine",
    )
    tools = _tool_calls(calls)

    assert done.returncode == 0, done.stderr
    assert not any(t.startswith(("kind create", "kind delete", "docker")) for t in tools)
    assert "kind load docker-image registry.example.com/op:dev --name mine" in tools
    kept = tmp_path / "cache" / "dra-operator" / "kind" / "mine.kubeconfig"
    assert kept.read_text() == "apiVersion: v1\n"
    assert f"export KUBECONFIG={kept}" in done.stderr


@pytest.mark.parametrize("failing", ["--server-side", "rollout", "REPO/e2e"])
def test_a_failing_step_still_deletes_the_cluster(tmp_path: Path, failing: str) -> None:
    fail_on = failing.replace("REPO", str(REPO))
    done, calls = _run(tmp_path, FAIL_ON=fail_on)
    tools = _tool_calls(calls)

    assert done.returncode != 0
    assert tools[-1] == "kind delete cluster --name dra-operator-1-36"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--k8s", "1.26"], "no kind config for Kubernetes 1.26", id="unknown-release"),
        pytest.param(["--frobnicate"], "unknown argument: --frobnicate", id="unknown-argument"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done, calls = _run(tmp_path, *args)

    assert done.returncode == 2
    assert message in done.stderr
    assert calls == []
