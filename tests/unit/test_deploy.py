"""deploy/: kustomize and the Helm chart ship the same small, locked-down objects.

Aspects covered:
* kustomize and Helm render the same objects — the same (kind, namespace, name) set and the
  same content up to Helm's bookkeeping labels — for every layout: deploy/ (routing, 1.36+),
  the monitoring overlay, the bare control plane, 1.34/1.35 with MutatingAdmissionPolicy
  v1beta1, and the refusing policies alone; the chart choosing each from the cluster's version
  and served APIs (docs/coexistence.md);
* chart values reach the objects (controllers, scheduler names, leader election, replicas,
  policies, monitoring switches) and `helm lint --strict` passes;
* the Deployment is hardened (non-root, seccomp RuntimeDefault, read-only root filesystem, no
  privilege escalation, every capability dropped), in both renderings;
* the chart's appVersion, the image tag and the Python package carry one version, and the
  chart's version is above the previous chart's;
* every alert and dashboard query parses as PromQL and uses only metrics docs/metrics.md lists;
* the kind configs switch on exactly the gates and API versions the local control plane
  does, for every release it supports (1.34 to 1.37).
"""

from __future__ import annotations

import copy
import json
import re
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml
from tests.support.manifests import (
    CHART,
    DEPLOY,
    NAMESPACE,
    REPO,
    Manifest,
    helm_lint,
    helm_path,
    helm_template,
    identity,
    kubectl_path,
    kustomize,
    parse,
    require_binary,
)

from dra_operator import controlplane
from dra_operator.names import CLAIMS_QUEUE, EVICTION_QUEUE, SCHEDULER_QUEUE

HELM_LABELS = (
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
)
MONITORING_ON = {
    "monitoring": {
        "serviceMonitor": {"enabled": True},
        "prometheusRule": {"enabled": True},
        "grafanaDashboard": {"enabled": True},
    }
}


@pytest.fixture(scope="module")
def kubectl() -> Path:
    return require_binary(kubectl_path(), "make controlplane")


@pytest.fixture(scope="module")
def helm() -> Path:
    return require_binary(helm_path(), "make helm")


@pytest.fixture
def helm_home(tmp_path: Path) -> Path:
    return tmp_path


def _without_helm_labels(manifest: Manifest) -> Manifest:
    stripped = copy.deepcopy(manifest)
    holders = [stripped["metadata"]]
    template = stripped.get("spec", {}).get("template")
    if isinstance(template, dict):
        holders.append(template["metadata"])
    for metadata in holders:
        labels = metadata.get("labels", {})
        for key in HELM_LABELS:
            labels.pop(key, None)
    return stripped


def _by_identity(manifests: list[Manifest]) -> dict[tuple[str, str, str], Manifest]:
    keyed = {identity(m): _without_helm_labels(m) for m in manifests}
    assert len(keyed) == len(manifests), "two manifests for one object"
    return keyed


def _deployment(manifests: list[Manifest]) -> Manifest:
    return next(m for m in manifests if m["kind"] == "Deployment")


NEWEST = ("--kube-version", "1.37.0")
BETA_POLICIES = ("--api-versions", "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy")
CREATE_NAMESPACE = {"namespace": {"create": True}}


@pytest.mark.parametrize(
    ("overlay", "values", "cluster"),
    [
        pytest.param("", CREATE_NAMESPACE, NEWEST, id="operator-with-routing"),
        pytest.param(
            "monitoring", {**CREATE_NAMESPACE, **MONITORING_ON}, NEWEST, id="with-monitoring"
        ),
        pytest.param(
            "bare-control-plane",
            {**CREATE_NAMESPACE, "routing": {"mode": "bare-control-plane"}},
            NEWEST,
            id="bare-control-plane",
        ),
        pytest.param(
            "release-1.34",
            CREATE_NAMESPACE,
            ("--kube-version", "1.35.2", *BETA_POLICIES),
            id="1.35-with-beta-mutating-policies",
        ),
        pytest.param(
            "require-scheduler-only",
            CREATE_NAMESPACE,
            ("--kube-version", "1.34.1"),
            id="1.34-without-mutating-policies",
        ),
        pytest.param(
            "",
            {**CREATE_NAMESPACE, "routing": {"mode": "manual", "mutate": True, "enforce": True}},
            ("--kube-version", "1.36.0"),
            id="manual",
        ),
    ],
)
def test_kustomize_and_helm_render_the_same_objects(
    kubectl: Path,
    helm: Path,
    helm_home: Path,
    overlay: str,
    values: dict[str, Any],
    cluster: tuple[str, ...],
) -> None:
    from_kustomize = _by_identity(parse(kustomize(kubectl, DEPLOY / overlay)))
    from_helm = _by_identity(parse(helm_template(helm, helm_home, values, *cluster)))

    assert sorted(from_helm) == sorted(from_kustomize)
    for key, manifest in from_kustomize.items():
        assert from_helm[key] == manifest, f"{key} differs between kustomize and helm"


def test_helm_leaves_the_namespace_to_helm_by_default(helm: Path, helm_home: Path) -> None:
    kinds = {m["kind"] for m in parse(helm_template(helm, helm_home))}

    assert "Namespace" not in kinds
    assert {"Deployment", "ClusterRole", "CustomResourceDefinition"} <= kinds


OPERATOR = {
    ("Namespace", "", NAMESPACE),
    ("CustomResourceDefinition", "", "allocationpolicies.dra-operator.dev"),
    ("ServiceAccount", NAMESPACE, "dra-operator"),
    ("ClusterRole", "", "dra-operator"),
    ("ClusterRoleBinding", "", "dra-operator"),
    ("Deployment", NAMESPACE, "dra-operator"),
    ("Service", NAMESPACE, "dra-operator-metrics"),
    ("PodDisruptionBudget", NAMESPACE, "dra-operator"),
    ("ConfigMap", NAMESPACE, "dra-operator-extended-resources"),
}
MUTATING = {
    (kind, "", name)
    for kind in ("MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")
    for name in ("dra-operator-route-claims", "dra-operator-route-extended-resources")
}
VALIDATING = {
    (kind, "", name)
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
    for name in (
        "dra-operator-require-scheduler",
        "dra-operator-require-scheduler-extended-resources",
    )
}


@pytest.mark.parametrize(
    ("overlay", "expected", "mutating_version"),
    [
        pytest.param("", OPERATOR | MUTATING | VALIDATING, "v1", id="deploy"),
        pytest.param("bare-control-plane", OPERATOR, None, id="bare-control-plane"),
        pytest.param("release-1.34", OPERATOR | MUTATING | VALIDATING, "v1beta1", id="1.34"),
        pytest.param("require-scheduler-only", OPERATOR | VALIDATING, None, id="refusing-only"),
    ],
)
def test_each_layout_is_exactly_the_operator_and_its_routing(
    kubectl: Path, overlay: str, expected: set[tuple[str, str, str]], mutating_version: str | None
) -> None:
    rendered = parse(kustomize(kubectl, DEPLOY / overlay))

    assert {identity(m) for m in rendered} == expected
    kinds = [m["kind"] for m in rendered]
    routing = [i for i, kind in enumerate(kinds) if "AdmissionPolicy" in kind]
    assert all(i < kinds.index("Deployment") for i in routing), "routing after the operator"
    versions = {m["apiVersion"] for m in rendered if m["kind"].startswith("Mutating")}
    wanted = {f"admissionregistration.k8s.io/{mutating_version}"} if mutating_version else set()
    assert versions == wanted
    refs = [m["spec"]["paramRef"] for m in rendered if "paramRef" in (m.get("spec") or {})]
    extended = [k for k in expected if k[0].endswith("Binding") and "extended" in k[2]]
    assert len(refs) == len(extended)
    for ref in refs:
        assert ref == {
            "name": "dra-operator-extended-resources",
            "namespace": NAMESPACE,
            "parameterNotFoundAction": "Allow",
        }


@pytest.mark.parametrize(
    ("cluster", "mutating_version", "validating"),
    [
        pytest.param(("--kube-version", "1.37.0"), "v1", True, id="1.37"),
        pytest.param(("--kube-version", "1.36.0"), "v1", True, id="1.36"),
        pytest.param(("--kube-version", "v1.36.1-eks.5"), "v1", True, id="1.36-provider-build"),
        pytest.param(("--kube-version", "1.35.0", *BETA_POLICIES), "v1beta1", True, id="1.35-beta"),
        pytest.param(("--kube-version", "1.35.0"), None, True, id="1.35"),
        pytest.param(("--kube-version", "1.30.0"), None, True, id="1.30"),
        pytest.param(("--kube-version", "1.29.4"), None, False, id="1.29"),
    ],
)
def test_the_chart_routes_by_the_clusters_version_and_apis(
    helm: Path,
    helm_home: Path,
    cluster: tuple[str, ...],
    mutating_version: str | None,
    validating: bool,
) -> None:
    rendered = parse(helm_template(helm, helm_home, None, *cluster))
    kinds = {identity(m) for m in rendered}

    versions = {m["apiVersion"] for m in rendered if m["kind"].startswith("Mutating")}
    if mutating_version is None:
        assert not kinds & MUTATING
    else:
        assert kinds >= MUTATING
        assert versions == {f"admissionregistration.k8s.io/{mutating_version}"}
    assert (kinds >= VALIDATING) is validating
    assert validating or not kinds & VALIDATING


def test_the_routing_reads_its_parameters_in_the_release_namespace(
    helm: Path, helm_home: Path
) -> None:
    argv = ("--kube-version", "1.37.0", "--namespace", "gpus")
    rendered = parse(helm_template(helm, helm_home, None, *argv))

    configmap = next(m for m in rendered if m["kind"] == "ConfigMap")
    assert configmap["metadata"]["namespace"] == "gpus"
    refs = [m["spec"]["paramRef"] for m in rendered if "paramRef" in (m.get("spec") or {})]
    assert len(refs) == 2
    assert {ref["namespace"] for ref in refs} == {"gpus"}


@pytest.mark.parametrize(
    ("values", "expected_args"),
    [
        pytest.param(
            {},
            [
                "run",
                "--scheduler-name=dra-operator",
                "--leader-elect",
                "--metrics-bind-address=:8080",
                "--health-bind-address=:8081",
                "--log-level=info",
            ],
            id="defaults-detect-controllers",
        ),
        pytest.param(
            {
                "controllers": ["claims", "scheduler", "eviction"],
                "schedulerNames": ["dra-operator", "gpu-scheduler"],
                "leaderElection": {"enabled": False},
                "logLevel": "debug",
                "extraArgs": ["--search-timeout=2s"],
                "ports": {"metrics": 9090, "health": 9091},
            },
            [
                "run",
                "--controllers=claims,scheduler,eviction",
                "--scheduler-name=dra-operator",
                "--scheduler-name=gpu-scheduler",
                "--metrics-bind-address=:9090",
                "--health-bind-address=:9091",
                "--log-level=debug",
                "--search-timeout=2s",
            ],
            id="every-flag-value",
        ),
    ],
)
def test_chart_values_become_operator_flags(
    helm: Path, helm_home: Path, values: dict[str, Any], expected_args: list[str]
) -> None:
    container = _deployment(parse(helm_template(helm, helm_home, values)))["spec"]["template"][
        "spec"
    ]["containers"][0]

    assert container["args"] == expected_args


def test_chart_renders_policies_replicas_and_image(helm: Path, helm_home: Path) -> None:
    values = {
        "replicas": 3,
        "image": {"repository": "registry.example.com/dra-operator", "tag": "dev"},
        "policies": [
            {"name": "gpus-bin-pack", "spec": {"strategy": "BinPack"}},
            {"name": "numa", "spec": {"strategy": "TopologyAffinity", "topologyAttribute": "n"}},
        ],
    }
    rendered = parse(helm_template(helm, helm_home, values))
    deployment = _deployment(rendered)
    policies = {m["metadata"]["name"]: m for m in rendered if m["kind"] == "AllocationPolicy"}

    assert deployment["spec"]["replicas"] == 3
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/dra-operator:dev"
    assert sorted(policies) == ["gpus-bin-pack", "numa"]
    assert policies["numa"]["apiVersion"] == "dra-operator.dev/v1alpha1"
    assert policies["numa"]["spec"] == {"strategy": "TopologyAffinity", "topologyAttribute": "n"}


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({"controllers": ["claims", "schedulr"]}, id="unknown-controller"),
        pytest.param({"logLevel": "verbose"}, id="unknown-log-level"),
        pytest.param({"schedulerNames": ["Not_A_Name"]}, id="scheduler-name-not-dns"),
        pytest.param({"replicas": 0}, id="no-replicas"),
    ],
)
def test_chart_schema_refuses_bad_values(
    helm: Path, helm_home: Path, values: dict[str, Any]
) -> None:
    with pytest.raises(AssertionError, match="values don't meet the specifications"):
        helm_template(helm, helm_home, values)


def test_helm_lint_passes(helm: Path, helm_home: Path) -> None:
    output = helm_lint(helm, helm_home)

    assert "1 chart(s) linted, 0 chart(s) failed" in output


@pytest.mark.parametrize("renderer", ["kustomize", "helm"])
def test_deployment_is_locked_down(
    kubectl: Path, helm: Path, helm_home: Path, renderer: str
) -> None:
    text = kustomize(kubectl, DEPLOY) if renderer == "kustomize" else helm_template(helm, helm_home)
    spec = _deployment(parse(text))["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    security = container["securityContext"]

    assert spec["replicas"] == 2
    assert "--leader-elect" in container["args"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert set(container["resources"]) == {"requests", "limits"}
    assert "schedulerName" not in pod, "the operator cannot place its own pods"


def test_one_version_for_package_app_and_image() -> None:
    """The chart's appVersion and the image tag are the package's; the chart's own version is
    above that of the previous chart kept in tests/data (the upgrade tests install it)."""
    package = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    base = yaml.safe_load((DEPLOY / "base" / "kustomization.yaml").read_text())
    with tarfile.open(REPO / "tests" / "data" / "dra-operator-0.1.0.tgz") as packaged:
        meta = packaged.extractfile("dra-operator/Chart.yaml")
        assert meta is not None
        previous = yaml.safe_load(meta)["version"]

    assert chart["appVersion"] == package
    assert _semver(chart["version"]) > _semver(previous), (chart["version"], previous)
    assert base["images"] == [{"name": "dra-operator", "newTag": package}]


def _semver(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_chart_files_are_links_to_deploy() -> None:
    """The chart reads the role, alerts, dashboard and CRD from deploy/ and crds/, not copies."""
    linked = [*CHART.joinpath("files").iterdir(), *CHART.joinpath("crds").iterdir()]

    assert linked
    for path in linked:
        assert path.is_symlink(), f"{path} must link to the file it mirrors"
        assert path.resolve().is_relative_to(REPO), path


# -- PromQL ----------------------------------------------------------------------------------

_HISTOGRAM_SUFFIX = re.compile(r"_(bucket|sum|count)$")


def _documented_metrics() -> set[str]:
    """The first column of docs/metrics.md's "The metrics" table."""
    section = (REPO / "docs" / "metrics.md").read_text().split("## The metrics", 1)[1]
    rows = section.split("\n## ", 1)[0].splitlines()
    cells = [row.split("|")[1].strip() for row in rows if row.startswith("|")]
    return {cell.strip("`") for cell in cells if cell.startswith("`")}


def _alert_queries() -> list[pytest.ParameterSet]:
    rule = yaml.safe_load((DEPLOY / "monitoring" / "prometheusrule.yaml").read_text())
    return [
        pytest.param(r["expr"], id=f"alert-{r['alert']}")
        for group in rule["spec"]["groups"]
        for r in group["rules"]
    ]


def _dashboard_queries() -> list[pytest.ParameterSet]:
    dashboard = json.loads((DEPLOY / "monitoring" / "dashboards" / "dra-operator.json").read_text())
    return [
        pytest.param(target["expr"], id=f"panel-{panel['id']}-{target['refId']}")
        for panel in dashboard["panels"]
        for target in panel["targets"]
    ]


def _metric_names(expr: promql_parser.Expr) -> set[str]:
    names: set[str] = set()

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)

    promql_parser.walk(expr, visit)
    return names


@pytest.mark.parametrize("query", [*_alert_queries(), *_dashboard_queries()])
def test_queries_parse_and_use_documented_metrics(query: str) -> None:
    # Grafana's variables are not PromQL: give them the values Grafana would.
    concrete = query.replace("$__rate_interval", "1m").replace("$job", "dra-operator")
    names = _metric_names(promql_parser.parse(concrete))
    ours = {_HISTOGRAM_SUFFIX.sub("", n) for n in names if n != "up"}

    assert names, "a query that reads no metric"
    assert ours <= _documented_metrics(), f"not in docs/metrics.md: {ours - _documented_metrics()}"


@pytest.mark.parametrize("query", [*_alert_queries(), *_dashboard_queries()])
def test_queries_select_controllers_and_queues_by_the_names_the_operator_exports(
    query: str,
) -> None:
    # Both labels carry the work-queue name (`reconcile_observer(metrics, queue name)`).
    exported = {CLAIMS_QUEUE, SCHEDULER_QUEUE, EVICTION_QUEUE}
    selected = set(re.findall(r'\b(?:controller|name)="([^"]+)"', query))
    assert selected <= exported


# -- kind ------------------------------------------------------------------------------------


# A kind config for every release the operator supports.
KIND_MINORS = controlplane.SUPPORTED_MINORS


@pytest.mark.parametrize("minor", KIND_MINORS)
def test_kind_config_switches_on_what_the_local_control_plane_does(minor: int) -> None:
    """Same DRA surface on kind as on the local control plane, so one e2e suite fits both."""
    config = yaml.safe_load((REPO / "e2e" / "kind" / f"kind-1.{minor}.yaml").read_text())
    release = controlplane.release_flags(minor)
    gates = dict(item.split("=") for item in release.feature_gates_flag().split(","))
    images = {node["image"] for node in config["nodes"]}

    assert (config["kind"], config["apiVersion"]) == ("Cluster", "kind.x-k8s.io/v1alpha4")
    assert config["featureGates"] == {name: value == "true" for name, value in gates.items()}
    assert config["runtimeConfig"] == {gv: "true" for gv in release.runtime_config}
    assert len(images) == 1
    assert images.pop().startswith(f"kindest/node:v1.{minor}.")
    assert [node["role"] for node in config["nodes"]] == ["control-plane", "worker", "worker"]


@pytest.mark.parametrize("minor", [27, 28, 29, 30, 31, 32, 33])
def test_older_kind_images_are_pinned_by_digest(minor: int) -> None:
    config = yaml.safe_load((REPO / "e2e" / "kind" / f"kind-1.{minor}.yaml").read_text())
    image = config["nodes"][0]["image"]
    assert re.fullmatch(rf"kindest/node:v1\.{minor}\.\d+@sha256:[0-9a-f]{{64}}", image), image


def test_kind_configs_cover_exactly_the_supported_releases() -> None:
    found = sorted(p.name for p in (REPO / "e2e" / "kind").glob("kind-*.yaml"))

    assert found == [f"kind-1.{minor}.yaml" for minor in KIND_MINORS]
