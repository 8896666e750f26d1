"""What users install applies to a real kube-apiserver, and bad AllocationPolicies do not.

Aspects covered:
* every object of `kubectl kustomize deploy/`, of the monitoring, bare-control-plane and
  require-scheduler-only overlays and of `helm template` (defaults, and every optional object
  switched on) passes a server-side dry-run apply: schema,
  defaulting, admission and CEL of the real API server, the Deployment's pod meeting the
  `restricted` Pod Security level its namespace enforces. ServiceMonitor and PrometheusRule are
  checked against prometheus-operator's published CRDs (tests/data/prometheus-operator);
* the AllocationPolicy CRD is established; valid policies are accepted (and defaulted), invalid
  ones are refused with the schema's or the CEL rule's message (docs/policies.md);
* the operator identity, under deploy/'s ClusterRole, can write a policy's status, and the
  status schema holds it to the Condition shape.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.manifests import (
    DEPLOY,
    REPO,
    helm_path,
    helm_template,
    kustomize,
    parse,
    require_binary,
)

from dra_operator import controlplane
from dra_operator.errors import APIError
from dra_operator.kube import Client, Resource

pytestmark = pytest.mark.controlplane

ALLOCATION_POLICIES = Resource("dra-operator.dev", "v1alpha1", "allocationpolicies", False)
CRDS = (
    REPO / "crds" / "dra-operator.dev_allocationpolicies.yaml",
    REPO / "tests" / "data" / "prometheus-operator" / "monitoring.coreos.com_servicemonitors.yaml",
    REPO / "tests" / "data" / "prometheus-operator" / "monitoring.coreos.com_prometheusrules.yaml",
)
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def kubectl(control_plane: controlplane.ControlPlaneState) -> Kubectl:
    """Run the built kubectl as admin; returns the finished process, whatever its exit code."""
    binary = controlplane.find_binaries().require("kubectl")

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(binary), "--kubeconfig", str(control_plane.admin_kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    return run


@pytest.fixture(scope="module")
def installed(kubectl: Kubectl) -> Path:
    """CRDs installed for real (objects of their kinds cannot be dry-run otherwise), and the
    operator's namespace (a dry-run namespace does not exist for the objects inside it).
    Returns kubectl's path for the tests that render manifests."""
    for crd in CRDS:
        done = kubectl("apply", "--server-side", "-f", str(crd))
        assert done.returncode == 0, done.stderr
    names = [yaml.safe_load(crd.read_text())["metadata"]["name"] for crd in CRDS]
    done = kubectl(
        "wait", "--for=condition=Established", "--timeout=60s", *(f"crd/{n}" for n in names)
    )
    assert done.returncode == 0, done.stderr
    namespace = next(
        m
        for m in parse((DEPLOY / "base" / "namespace.yaml").read_text())
        if m["kind"] == "Namespace"
    )
    done = kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(namespace))
    assert done.returncode == 0, done.stderr
    return controlplane.find_binaries().require("kubectl")


def _render(source: str, kubectl_binary: Path, home: Path) -> str:
    if source == "kustomize":
        return kustomize(kubectl_binary, DEPLOY)
    if source.startswith("kustomize-"):
        return kustomize(kubectl_binary, DEPLOY / source.removeprefix("kustomize-"))
    helm = require_binary(helm_path(), "make helm")
    if source == "helm":
        return helm_template(helm, home)
    everything = {
        "namespace": {"create": True},
        "controllers": ["claims", "scheduler", "eviction"],
        "policies": [
            {"name": "bin-pack", "spec": {"strategy": "BinPack"}},
            {
                "name": "numa",
                "spec": {"strategy": "TopologyAffinity", "topologyAttribute": "numaNode"},
            },
        ],
        "monitoring": {
            "serviceMonitor": {"enabled": True},
            "prometheusRule": {"enabled": True},
            "grafanaDashboard": {"enabled": True},
        },
        "routing": {"mode": "manual", "mutate": True, "enforce": True},
    }
    return helm_template(helm, home, everything)


@pytest.mark.parametrize(
    "source",
    [
        "kustomize",
        "kustomize-monitoring",
        "kustomize-bare-control-plane",
        "kustomize-require-scheduler-only",
        "helm",
        "helm-everything-on",
    ],
)
def test_every_manifest_passes_a_server_side_dry_run(
    kubectl: Kubectl, installed: Path, tmp_path: Path, source: str
) -> None:
    text = _render(source, installed, tmp_path)
    objects = parse(text)
    # --force-conflicts: the test harness already owns a binding of the same name; a dry run
    # changes nothing either way.
    done = kubectl(
        "apply", "--server-side", "--dry-run=server", "--force-conflicts",
        "--field-manager=dra-operator-manifests-test", "-f", "-", stdin=text,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.count("serverside-applied (server dry run)") == len(objects)
    assert "PodSecurity" not in done.stderr, done.stderr


# -- AllocationPolicy -----------------------------------------------------------------------


def _policy(spec: dict[str, Any], name: str = "p") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "dra-operator.dev/v1alpha1",
            "kind": "AllocationPolicy",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="empty-spec-governs-everything"),
        pytest.param(
            {"strategy": "BinPack", "deviceClassNames": ["gpu.example.com"]}, id="binpack"
        ),
        pytest.param({"strategy": "Spread", "searchBudget": {"timeout": "1.5s"}}, id="spread"),
        pytest.param(
            {
                "strategy": "TopologyAffinity",
                "topologyAttribute": "gpu.example.com/numaNode",
                "namespaceSelector": {"matchLabels": {"team": "ml"}},
                "claimSelector": {
                    "matchExpressions": [
                        {"key": "tier", "operator": "In", "values": ["training"]},
                        {"key": "scratch", "operator": "DoesNotExist"},
                    ]
                },
                "nodeScoring": {"strategyWeight": 2, "hookWeight": 0},
                "searchBudget": {"steps": 100000, "timeout": "250ms"},
                "hooks": ["prefer-newest", "examples.hooks.veto:hook"],
            },
            id="every-field",
        ),
    ],
)
def test_valid_policies_are_accepted(
    kubectl: Kubectl, installed: Path, spec: dict[str, Any]
) -> None:
    done = kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", stdin=_policy(spec))

    assert done.returncode == 0, done.stderr
    assert "serverside-applied (server dry run)" in done.stdout


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"strategy": "TopologyAffinity"},
            "spec.topologyAttribute: Required value: topologyAttribute is required when "
            "strategy is TopologyAffinity",
            id="topology-affinity-without-attribute",
        ),
        pytest.param(
            {"strategy": "BinPack", "topologyAttribute": "numaNode"},
            "spec.topologyAttribute: Forbidden: topologyAttribute may only be set when "
            "strategy is TopologyAffinity",
            id="attribute-without-topology-affinity",
        ),
        pytest.param(
            {"searchBudget": {"steps": -1}},
            "spec.searchBudget.steps: Invalid value: -1: spec.searchBudget.steps in body "
            "should be greater than or equal to 1",
            id="negative-steps",
        ),
        pytest.param(
            {"strategy": "Random"},
            'spec.strategy: Unsupported value: "Random": supported values: "FirstFit", '
            '"BinPack", "Spread", "TopologyAffinity"',
            id="unknown-strategy",
        ),
        pytest.param(
            {"searchBudget": {"timeout": "1h"}},
            'spec.searchBudget.timeout: Invalid value: "1h": timeout must be between 1ms and 10m',
            id="timeout-too-long",
        ),
        pytest.param(
            {"searchBudget": {"timeout": "soon"}},
            "spec.searchBudget.timeout in body should match",
            id="timeout-not-a-duration",
        ),
        pytest.param(
            {"searchBudget": {}},
            "spec.searchBudget in body should have at least 1 properties",
            id="empty-search-budget",
        ),
        pytest.param(
            {"nodeScoring": {"strategyWeight": 101}},
            "spec.nodeScoring.strategyWeight in body should be less than or equal to 100",
            id="weight-above-100",
        ),
        pytest.param(
            {"claimSelector": {"matchExpressions": [{"key": "tier", "operator": "In"}]}},
            "values: must be specified when `operator` is 'In' or 'NotIn'",
            id="selector-in-without-values",
        ),
        pytest.param(
            {"strategy": "TopologyAffinity", "topologyAttribute": "gpu.example.com/numa-node"},
            "spec.topologyAttribute in body should match",
            id="attribute-not-a-c-identifier",
        ),
        pytest.param(
            {"strategy": "TopologyAffinity", "topologyAttribute": "a" * 64 + ".com/x"},
            "the domain of topologyAttribute must be at most 63 characters",
            id="attribute-domain-too-long",
        ),
        pytest.param(
            {"deviceClassNames": ["GPU"]},
            "spec.deviceClassNames[0] in body should match",
            id="class-name-not-dns",
        ),
        pytest.param(
            {"hooks": ["a", "a"]},
            '.spec.hooks: duplicate entries for key [="a"]',
            id="duplicate-hook",
        ),
    ],
)
def test_invalid_policies_are_refused_by_the_api_server(
    kubectl: Kubectl, installed: Path, spec: dict[str, Any], message: str
) -> None:
    done = kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", stdin=_policy(spec))

    assert done.returncode != 0
    assert message in done.stderr


@pytest.fixture
async def policy(admin_api: Client, installed: Path) -> AsyncIterator[dict[str, Any]]:
    name = f"p-{uuid.uuid4().hex[:8]}"
    created = await admin_api.create(ALLOCATION_POLICIES, yaml.safe_load(_policy({}, name)))
    yield created
    await admin_api.delete(ALLOCATION_POLICIES, name)


def _conditions(generation: int, **extra: Any) -> dict[str, Any]:
    accepted = {
        "type": "Accepted",
        "status": "True",
        "reason": "Valid",
        "message": "the policy is in use",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": generation,
        **extra,
    }
    return {
        "status": {"observedGeneration": generation, "governedClaims": 3, "conditions": [accepted]}
    }


async def test_policy_defaults_and_the_operator_writes_its_status(
    policy: dict[str, Any], operator_api: Client, kubectl: Kubectl
) -> None:
    name = policy["metadata"]["name"]
    generation = policy["metadata"]["generation"]

    written = await operator_api.patch(
        ALLOCATION_POLICIES, name, _conditions(generation), subresource="status"
    )
    table = kubectl("get", "allocationpolicy", name, "-o", "wide")

    assert policy["spec"] == {"strategy": "FirstFit"}
    assert written["status"]["conditions"][0]["type"] == "Accepted"
    assert table.returncode == 0, table.stderr
    header, row = table.stdout.splitlines()
    assert header.split() == ["NAME", "STRATEGY", "ATTRIBUTE", "ACCEPTED", "CLAIMS", "AGE"]
    # The attribute column is empty for FirstFit, so the row has one word fewer.
    assert row.split()[:4] == [name, "FirstFit", "True", "3"]


async def test_policy_status_must_hold_conditions(
    policy: dict[str, Any], operator_api: Client
) -> None:
    bad = _conditions(policy["metadata"]["generation"], status="Maybe")

    with pytest.raises(APIError, match='Unsupported value: "Maybe"'):
        await operator_api.patch(
            ALLOCATION_POLICIES, policy["metadata"]["name"], bad, subresource="status"
        )
