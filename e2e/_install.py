"""The operator installed into the local cluster the way users install it: deploy/ or Helm.

The local control plane runs `in_cluster` (kube-scheduler places the operator's own pods,
kube-controller-manager turns the Deployment into pods, pods reach the apiserver through the
`kubernetes` Service: docs/install.md). The image is the one `make image` builds from the
Dockerfile, imported into every node's containerd. Installs go through the cached kubectl
(`kubectl apply -k`) and helm binaries, as the docs show them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from tests.support.manifests import CHART, DEPLOY, NAMESPACE, REPO, helm_env, parse

from dra_operator import controlplane

__all__ = [
    "DEPLOYMENT",
    "HELM",
    "INSTALL_ENV",
    "UPGRADE_TAG",
    "Installer",
    "image_archive",
    "install_with",
    "version",
]

DEPLOYMENT = "dra-operator"
RELEASE = "dra-operator"
# kube-scheduler runs here, so the install is the one for clusters with kube-scheduler, which
# deploy/ is from 1.36 (the deployed suite needs real nodes: 1.36+): the routing policies send
# every pod that needs a device to dra-operator (docs/coexistence.md). The chart's default
# (routing.mode auto) chooses the same from the server.
KUSTOMIZATION = DEPLOY
INSTALL_SCRIPT = REPO / "e2e" / "kind" / "install.sh"
"""The steps e2e/kind/run.sh runs in kind too (tests/unit/test_kind_run.py keeps them one)."""
_KEEP_ON_DELETE = {"Namespace", "CustomResourceDefinition"}
_DEPLOYMENT = f"deployment/{DEPLOYMENT}"
_WAIT = ("--wait", "--timeout", "5m")


INSTALL_ENV = "DRA_OPERATOR_E2E_INSTALL"
KUSTOMIZE = "kustomize"
HELM = "helm"


def install_with(environ: Mapping[str, str]) -> str:
    """How the deployed suite installs the operator: deploy/ with kubectl (the default) or the
    Helm chart, the two ways docs/install.md shows."""
    how = environ.get(INSTALL_ENV) or KUSTOMIZE
    if how not in (KUSTOMIZE, HELM):
        raise ValueError(f"{INSTALL_ENV}={how!r}: only {KUSTOMIZE!r} or {HELM!r} is understood")
    return how


def version() -> str:
    for line in (REPO / "pyproject.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise AssertionError("pyproject.toml has no version")


UPGRADE_TAG = f"{version()}-upgrade"
"""The image tagged again on the nodes: another image reference for `helm upgrade`."""


def image_archive() -> Path:
    """Where `make image` (e2e/image/build.sh) leaves the image as a docker-archive."""
    explicit = os.environ.get("DRA_OPERATOR_IMAGE_CACHE")
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(explicit) if explicit else xdg / "dra-operator" / "image"
    return cache / f"dra-operator-{version()}.tar"


@dataclasses.dataclass(frozen=True, slots=True)
class Installer:
    """kubectl and helm against the cluster of `kubeconfig`; helm's state under `home`."""

    kubectl: Path
    helm: Path
    kubeconfig: Path
    home: Path

    def _run(
        self, argv: Sequence[str | Path], stdin: str | None = None, timeout: float = 300.0
    ) -> str:
        done = subprocess.run(
            [str(a) for a in argv],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig), **helm_env(self.home)},
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{' '.join(map(str, argv))} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        return done.stdout

    @property
    def _in_namespace(self) -> list[str | Path]:
        return [self.kubectl, "-n", NAMESPACE]

    def kubectl_json(self, *args: str) -> Any:
        return json.loads(self._run([self.kubectl, *args, "-o", "json"]))

    # -- kustomize ---------------------------------------------------------------------------

    def install_argv(self) -> list[str | Path]:
        """e2e/kind/install.sh as run here; run.sh runs it with the same arguments."""
        return ["bash", INSTALL_SCRIPT, "--kubectl", self.kubectl]

    def apply_kustomize(self) -> None:
        """As docs/install.md and kind: e2e/kind/install.sh (the CRDs, then the layout of
        deploy/ for the server's release, then the rollout); the operator's log on failure."""
        try:
            self._run(self.install_argv(), timeout=600)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.logs()}") from None

    def delete_kustomize(self) -> None:
        """Delete what `apply_kustomize` created but the namespace and the CRDs (a namespace
        never finishes deleting here: no namespace controller), and wait for the pods."""
        rendered = parse(self._run([self.kubectl, "kustomize", KUSTOMIZATION]))
        kept = [doc for doc in rendered if doc["kind"] not in _KEEP_ON_DELETE]
        self._run(
            [self.kubectl, "delete", "--wait", "--ignore-not-found", "-f", "-"],
            stdin=yaml.safe_dump_all(kept),
        )
        self.wait_no_pods()

    # -- helm ------------------------------------------------------------------------------

    def _values(self, values: Mapping[str, Any]) -> Path:
        path = self.home / "values.json"
        path.write_text(json.dumps(dict(values)))  # JSON: YAML quoting every string
        return path

    def helm_install(
        self, values: Mapping[str, Any], *, take_ownership: bool = False, chart: Path = CHART
    ) -> None:
        """`take_ownership`: adopt objects of the same name already there, such as deploy/'s
        ClusterRole that the local control plane applies for its RBAC-limited identity;
        `chart`: another chart (a packaged previous version)."""
        values_file = self._values(values)
        adopt = ["--take-ownership"] if take_ownership else []
        self._run(
            [
                self.helm,
                "install",
                RELEASE,
                chart,
                "--namespace",
                NAMESPACE,
                "--create-namespace",  # as docs/install.md shows it
                *_WAIT,
                *adopt,
                "--values",
                values_file,
            ]
        )

    def helm_upgrade(
        self, values: Mapping[str, Any], *, wait: bool = True, chart: Path = CHART
    ) -> None:
        values_file = self._values(values)
        argv = [
            self.helm,
            "upgrade",
            RELEASE,
            chart,
            "--namespace",
            NAMESPACE,
            *(_WAIT if wait else ()),
        ]
        self._run([*argv, "--values", values_file])

    def helm_uninstall(self) -> None:
        self._run([self.helm, "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait"])
        self.wait_no_pods()

    def has_helm_release(self) -> bool:
        listed = self._run([self.helm, "list", "--namespace", NAMESPACE, "--short"])
        return RELEASE in listed.split()

    # -- kubectl apply, as docs/install.md writes it ------------------------------------------

    def apply_file(self, manifest: Path) -> None:
        """`kubectl apply --server-side -f manifest` (a rendered layout, such as a previous
        release's)."""
        self._run([self.kubectl, "apply", "--server-side", "-f", manifest])

    def apply_layout(self, layout: Path = KUSTOMIZATION) -> None:
        """docs/install.md's upgrade: `kubectl apply --server-side -k crds/`, then
        `kubectl apply --server-side -k deploy/` (no --force-conflicts, no --prune)."""
        self._run([self.kubectl, "apply", "--server-side", "-k", REPO / "crds"])
        self._run([self.kubectl, "apply", "--server-side", "-k", layout])

    def apply_stdin(self, manifests: str) -> None:
        self._run([self.kubectl, "apply", "--server-side", "-f", "-"], stdin=manifests)

    def delete_stdin(self, manifests: str) -> None:
        self._run([self.kubectl, "delete", "--ignore-not-found", "-f", "-"], stdin=manifests)

    # -- the Deployment ----------------------------------------------------------------------

    def rollout_status(self, timeout: float = 300.0) -> None:
        wait = f"--timeout={timeout:.0f}s"
        self._run(
            [*self._in_namespace, "rollout", "status", _DEPLOYMENT, wait], timeout=timeout + 30
        )

    def rollout_restart(self) -> None:
        self._run([*self._in_namespace, "rollout", "restart", _DEPLOYMENT])

    def pods(self) -> list[dict[str, Any]]:
        selector = "app.kubernetes.io/name=dra-operator,app.kubernetes.io/component=operator"
        found = self.kubectl_json("-n", NAMESPACE, "get", "pods", "-l", selector)
        return list(found["items"])

    def wait_no_pods(self, timeout: float = 120.0) -> None:
        selector = "app.kubernetes.io/name=dra-operator"
        wait = f"--timeout={timeout:.0f}s"
        self._run(
            [*self._in_namespace, "wait", "--for=delete", "pod", "-l", selector, wait],
            timeout=timeout + 30,
        )

    def exec(self, pod: str, *command: str) -> str:
        """`kubectl exec` in an operator pod: its output (stdout and stderr)."""
        return self._run([*self._in_namespace, "exec", pod, "--", *command])

    def logs(self, tail: int = 60) -> str:
        try:
            return self._run([*self._in_namespace, "logs", _DEPLOYMENT, f"--tail={tail}"])
        except AssertionError as exc:
            return str(exc)


def load_image(state: controlplane.ControlPlaneState, archive: Path, *tags: str) -> None:
    """Import `archive` into every node and tag it there also as each of `tags` (a changed
    image reference for `helm upgrade`, without a second 300 MB archive)."""
    node_binaries = controlplane.find_node_binaries()
    source = f"docker.io/library/dra-operator:{version()}"
    for node in state.nodes:
        controlplane.import_image(node, node_binaries, archive)
        for tag in tags:
            subprocess.run(
                [
                    str(node_binaries.ctr),
                    f"--address={node.containerd_socket}",
                    "--namespace=k8s.io",
                    "images",
                    "tag",
                    "--force",
                    source,
                    f"docker.io/library/dra-operator:{tag}",
                ],
                capture_output=True,
                check=True,
                timeout=60,
            )
