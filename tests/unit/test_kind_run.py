"""e2e/kind/run.sh and e2e/kind/install.sh drive kind, kubectl and pytest in the right order.

There is no Docker here, so the scripts run against stand-ins on PATH that record their
arguments (and can be told to fail); the real tools are exercised by people with Docker.

Aspects covered: the whole sequence for a release (cluster from its config, `make image`'s
archive loaded with `kind load image-archive`, then install.sh: the server's release read,
CRDs before the layout of deploy/ for that release, rollout waited for; the e2e suite run with
the cluster's KUBECONFIG and told the operator is deployed, cluster deleted); the layout per
release (1.36+ deploy/, 1.34/1.35 with MutatingAdmissionPolicy v1beta1 served
deploy/release-1.34, 1.30-1.35 otherwise require-scheduler-only, before 1.30 the bare layout
and a warning: no v1 admission policy before 1.30); the deployed suite on the local control
plane (e2e/_install.py) runs exactly the same install steps as run.sh; --keep, --no-build
with --image, --archive, reusing an existing cluster; a failing step still deletes the
cluster; unknown releases and arguments are refused before anything runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from e2e._install import Installer
from tests.support.manifests import REPO

RUN = REPO / "e2e" / "kind" / "run.sh"
VERSION = "0.1.0"
TOOLS = ("docker", "kind", "kubectl", "pytest", "make")

# Each stand-in appends "<tool> <args>" to $CALLS; FAIL_ON=<word> makes the call whose
# arguments contain <word> fail. `kind get clusters` lists $EXISTING; `kubectl version`
# reports release 1.$MINOR for the server (after kubectl's own), and the v1beta1 discovery of
# admissionregistration.k8s.io lists $BETA.
_STAND_IN = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >>"$CALLS"
if [ -n "${FAIL_ON:-}" ] && [[ " $* " == *" $FAIL_ON "* ]]; then exit 1; fi
if [ "$(basename "$0")" = kind ] && [ "$1 $2" = "get clusters" ]; then echo "${EXISTING:-}"; fi
if [ "$(basename "$0")" = kind ] && [ "$1 $2" = "get kubeconfig" ]; then echo "apiVersion: v1"; fi
if [ "$(basename "$0")" = kubectl ] && [ "$1" = version ]; then
  printf '{\n  "clientVersion": {\n    "minor": "37",\n  },\n'
  printf '  "serverVersion": {\n    "major": "1",\n    "minor": "%s+",\n  }\n}\n' "${MINOR:-36}"
fi
if [ "$(basename "$0")" = kubectl ] && [ "$1 $2" = "get --raw" ]; then
  echo "{\"resources\": [${BETA:-}]}"
fi
if [ "$(basename "$0")" = pytest ]; then
  echo "pytest-env KUBECONFIG=$KUBECONFIG OPERATOR=$DRA_OPERATOR_E2E_OPERATOR" >>"$CALLS"
fi
exit 0
"""


def _stand_ins(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in TOOLS:
        stand_in = bin_dir / tool
        stand_in.write_text(_STAND_IN)
        stand_in.chmod(0o755)
    return bin_dir


def _archive(tmp_path: Path) -> Path:
    """Where run.sh finds `make image`'s archive under the test's cache (made up front: the
    stand-in make builds nothing)."""
    archive = tmp_path / "cache" / "dra-operator" / "image" / f"dra-operator-{VERSION}.tar"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_text("")
    return archive


def _run(
    tmp_path: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir = _stand_ins(tmp_path)
    _archive(tmp_path)
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


def _install_steps(layout: str) -> list[str]:
    return [
        "kubectl version -o json",
        "kubectl get --raw /apis/admissionregistration.k8s.io/v1beta1",
        "kubectl apply --server-side -k REPO/crds",
        "kubectl wait --for=condition=Established --timeout=60s "
        "crd/allocationpolicies.dra-operator.dev",
        f"kubectl apply --server-side -k REPO/{layout}",
        "kubectl -n dra-operator-system rollout status deployment/dra-operator --timeout=300s",
    ]


def test_full_run_creates_installs_tests_and_deletes(tmp_path: Path) -> None:
    done, calls = _run(tmp_path, "--k8s", "1.35", "--", "-k", "taint", MINOR="35")
    archive = tmp_path / "cache" / "dra-operator" / "image" / f"dra-operator-{VERSION}.tar"
    tools = _tool_calls(calls)

    assert done.returncode == 0, done.stderr
    assert tools == [
        "kind get clusters",
        "kind create cluster --name dra-operator-1-35 "
        "--config REPO/e2e/kind/kind-1.35.yaml --wait 180s",
        "kind get kubeconfig --name dra-operator-1-35",
        "make -C REPO image",
        f"kind load image-archive {archive} --name dra-operator-1-35",
        # 1.35 without MutatingAdmissionPolicy: only the refusing policies.
        *_install_steps("deploy/require-scheduler-only"),
        "pytest -p no:cacheprovider REPO/e2e -k taint",
        "kind delete cluster --name dra-operator-1-35",
    ]


@pytest.mark.parametrize(
    ("minor", "beta", "layout"),
    [
        pytest.param("37", "", "deploy", id="1.37"),
        pytest.param("36", "", "deploy", id="1.36"),
        pytest.param(
            "35", '{"name": "mutatingadmissionpolicies"}', "deploy/release-1.34", id="1.35-beta"
        ),
        pytest.param(
            "34",
            '{"name": "validatingadmissionpolicies"}',
            "deploy/require-scheduler-only",
            id="1.34",
        ),
        pytest.param("30", "", "deploy/require-scheduler-only", id="1.30"),
        pytest.param("29", "", "deploy/bare-control-plane", id="1.29"),
        pytest.param("27", "", "deploy/bare-control-plane", id="1.27"),
    ],
)
def test_the_layout_follows_the_servers_release(
    tmp_path: Path, minor: str, beta: str, layout: str
) -> None:
    done, calls = _run(tmp_path, "--k8s", f"1.{minor}", MINOR=minor, BETA=beta)
    tools = _tool_calls(calls)

    assert done.returncode == 0, done.stderr
    assert f"kubectl apply --server-side -k REPO/{layout}" in tools
    applied = [t for t in tools if t.startswith("kubectl apply")]
    assert len(applied) == 2  # the CRDs, then one layout: no v1 policy file on its own
    warned = "no admission policy: nothing routes pods" in done.stderr
    assert warned == (int(minor) < 30)
    (env,) = [line for line in calls if line.startswith("pytest-env")]
    assert env.endswith("/kubeconfig OPERATOR=deployed")


def test_the_local_deployed_suite_installs_with_the_same_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done, calls = _run(tmp_path, "--k8s", "1.37", MINOR="37")
    assert done.returncode == 0, done.stderr
    from_kind = [t for t in _tool_calls(calls) if t.startswith("kubectl")]

    local = tmp_path / "local"
    local.mkdir()
    calls_file = local / "calls"
    calls_file.write_text("")
    monkeypatch.setenv("CALLS", str(calls_file))
    monkeypatch.setenv("MINOR", "37")
    installer = Installer(
        kubectl=tmp_path / "bin" / "kubectl",
        helm=tmp_path / "bin" / "helm",
        kubeconfig=local / "kubeconfig",
        home=local,
    )
    installer.apply_kustomize()
    from_local = _tool_calls(calls_file.read_text().splitlines())

    assert from_local == from_kind == _install_steps("deploy")


def test_an_archive_or_image_of_ones_own(tmp_path: Path) -> None:
    archive = tmp_path / "mine.tar"
    archive.write_text("")
    done, calls = _run(
        tmp_path, "--archive", str(archive), "--image", "registry.example.com/op:dev", MINOR="36"
    )
    tools = _tool_calls(calls)

    assert done.returncode == 0, done.stderr
    assert not any(t.startswith("make") for t in tools)
    assert f"kind load image-archive {archive} --name dra-operator-1-36" in tools
    assert (
        "kubectl -n dra-operator-system set image deployment/dra-operator "
        "operator=registry.example.com/op:dev"
    ) in tools


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
    assert not any(t.startswith(("kind create", "kind delete", "make")) for t in tools)
    assert any(t.startswith("kind load image-archive ") for t in tools)
    assert "operator=registry.example.com/op:dev" in tools[-3]
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
