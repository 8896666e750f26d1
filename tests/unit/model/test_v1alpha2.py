"""resource.k8s.io/v1alpha2 (1.27–1.30) objects parse to their model values and render back.

Fixtures `data/v1alpha2/*.json` are the JSON a v1.30.14 kube-apiserver writes: e2e/
test_named_resources.py creates each on that server and compares what it reads back.
Covers every kind, both allocation forms (classic `data` and
1.30's `structuredData`), every named-resources attribute type, RawExtensions written as null,
the allocationMode default and error paths.
"""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.errors import InvalidObjectError
from dra_operator.model import Quantity, v1alpha2

DATA = Path(__file__).parent / "data" / "v1alpha2"
FIXTURES = sorted(p.name for p in DATA.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / name).read_text())
    return result


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_round_trips_exactly(name: str) -> None:
    raw = load(name)
    assert v1alpha2.render_object(v1alpha2.parse_object(raw)) == raw


def test_every_kind_has_a_fixture() -> None:
    kinds = {load(name)["kind"] for name in FIXTURES}
    assert kinds == {
        "ResourceClass",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "PodSchedulingContext",
        "ResourceSlice",
        "ResourceClassParameters",
        "ResourceClaimParameters",
    }


def test_resource_class_fields_are_top_level() -> None:
    cls = v1alpha2.parse_object(load("resourceclass.json"))
    assert isinstance(cls, v1alpha2.ResourceClass)
    assert cls.driver_name == "gpu.example.com"
    assert cls.structured_parameters is True
    assert cls.parameters_ref == v1alpha2.ClassParametersReference(
        api_group="resource.k8s.io",
        kind="ResourceClassParameters",
        name="gpu-class",
        namespace="dra-system",
    )
    assert cls.suitable_nodes is not None


def test_classic_claim() -> None:
    claim = v1alpha2.parse_object(load("resourceclaim-classic.json"))
    assert isinstance(claim, v1alpha2.ResourceClaim)
    assert claim.spec.allocation_mode == v1alpha2.IMMEDIATE
    assert claim.status.driver_name == "classic.example.com"
    allocation = claim.status.allocation
    assert allocation is not None and allocation.shareable
    (handle,) = allocation.resource_handles
    assert handle.data == '{"gpus":["gpu-0"]}' and handle.structured_data is None
    assert [c.name for c in claim.status.reserved_for] == ["trainer-0"]


def test_structured_claim_keeps_vendor_parameters_and_nulls() -> None:
    claim = v1alpha2.parse_object(load("resourceclaim-structured.json"))
    assert isinstance(claim, v1alpha2.ResourceClaim)
    assert claim.status.deallocation_requested
    assert claim.status.allocation is not None
    data = claim.status.allocation.resource_handles[0].structured_data
    assert data is not None and data.node_name == "node-a"
    assert data.vendor_class_parameters == '{"kind":"GpuConfig","sharing":"timeslice"}'
    assert data.vendor_claim_parameters is None
    assert [r.named_resources.name for r in data.results if r.named_resources] == ["gpu-0", "gpu-1"]


def test_allocation_mode_defaults_to_wait_for_first_consumer() -> None:
    raw = load("resourceclaim-classic.json")
    del raw["spec"]["allocationMode"]
    claim = v1alpha2.parse_object(raw)
    assert isinstance(claim, v1alpha2.ResourceClaim)
    assert claim.spec.allocation_mode == v1alpha2.WAIT_FOR_FIRST_CONSUMER


def test_every_named_attribute_type() -> None:
    resource_slice = v1alpha2.parse_object(load("resourceslice.json"))
    assert isinstance(resource_slice, v1alpha2.ResourceSlice)
    assert resource_slice.instances is not None
    values = {a.name: (a.kind, a.value) for a in resource_slice.instances[0].attributes}
    kind = v1alpha2.NamedAttributeKind
    assert values == {
        "memory": (kind.QUANTITY, Quantity.parse("80Gi")),
        "mig": (kind.BOOL, True),
        "index": (kind.INT, 0),
        "cores": (kind.INT_SLICE, (0, 1, 2)),
        "model": (kind.STRING, "A100"),
        "links": (kind.STRING_SLICE, ("gpu-1",)),
        "driver-version": (kind.VERSION, "1.2.3-rc.1"),
    }
    assert resource_slice.instances[1].attributes == ()


def test_slice_without_a_model_has_no_instances() -> None:
    raw = load("resourceslice.json")
    del raw["namedResources"]
    resource_slice = v1alpha2.parse_object(raw)
    assert isinstance(resource_slice, v1alpha2.ResourceSlice)
    assert resource_slice.instances is None
    assert v1alpha2.render_object(resource_slice) == raw


def test_parameters() -> None:
    claim_params = v1alpha2.parse_object(load("resourceclaimparameters.json"))
    assert isinstance(claim_params, v1alpha2.ResourceClaimParameters)
    assert claim_params.shareable
    (driver,) = claim_params.driver_requests
    assert [r.selector for r in driver.requests][1] == "true"
    assert driver.requests[1].vendor_parameters == '{"mig":"1g"}'
    class_params = v1alpha2.parse_object(load("resourceclassparameters.json"))
    assert isinstance(class_params, v1alpha2.ResourceClassParameters)
    assert class_params.filters[0].selector == 'attributes.bool["mig"]'


def test_scheduling_context() -> None:
    context = v1alpha2.parse_object(load("podschedulingcontext.json"))
    assert isinstance(context, v1alpha2.PodSchedulingContext)
    assert context.selected_node == "node-b"
    assert context.potential_nodes == ("node-a", "node-b", "node-c")
    assert context.resource_claims[0].unsuitable_nodes == ("node-a",)


def test_fresh_scheduling_context_renders_empty_spec_and_status() -> None:
    context = v1alpha2.PodSchedulingContext(
        metadata=v1alpha2.parse_object(load("podschedulingcontext.json")).metadata
    )
    rendered = v1alpha2.render_pod_scheduling_context(context)
    assert rendered["spec"] == {} and rendered["status"] == {}


@pytest.mark.parametrize(
    ("name", "mutate", "path", "message"),
    [
        pytest.param(
            "resourceclass.json",
            lambda r: r.pop("driverName"),
            "driverName",
            "required value",
            id="class-without-driver",
        ),
        pytest.param(
            "resourceclaim-classic.json",
            lambda r: r["spec"].pop("resourceClassName"),
            "spec.resourceClassName",
            "required value",
            id="claim-without-class",
        ),
        pytest.param(
            "resourceslice.json",
            lambda r: r["namedResources"]["instances"][0]["attributes"][1].update(int=3),
            "namedResources.instances[0].attributes[1]",
            "exactly one value must be set, not bool, int",
            id="attribute-with-two-values",
        ),
        pytest.param(
            "resourceslice.json",
            lambda r: r["namedResources"]["instances"][0]["attributes"][3].update(
                intSlice={"ints": ["x"]}
            ),
            "namedResources.instances[0].attributes[3].intSlice.ints[0]",
            "must be an integer, not string",
            id="int-slice-of-strings",
        ),
        pytest.param(
            "resourceclaim-structured.json",
            lambda r: r["status"]["allocation"]["resourceHandles"][0]["structuredData"]["results"][
                0
            ].update(namedResources={}),
            "status.allocation.resourceHandles[0].structuredData.results[0].namedResources.name",
            "required value",
            id="result-without-instance-name",
        ),
    ],
)
def test_bad_fields_name_their_path(name: str, mutate: Any, path: str, message: str) -> None:
    raw = copy.deepcopy(load(name))
    mutate(raw)
    with pytest.raises(InvalidObjectError) as err:
        v1alpha2.parse_object(raw)
    assert err.value.path == path
    assert message in err.value.message


def test_other_versions_are_refused() -> None:
    with pytest.raises(InvalidObjectError, match="unsupported apiVersion"):
        v1alpha2.parse_object({**load("resourceclass.json"), "apiVersion": "resource.k8s.io/v1"})
