"""Extended resources backed by DRA: names, the class mapping, and the special claim's requests.

The request/mapping cases are kube-scheduler v1.36.4's `Test_createRequestsAndMappings_*`
(extendeddynamicresources_test.go), with its container names and expectations.
"""

import datetime
from typing import Any

import pytest

from dra_operator import names
from dra_operator.model import (
    ContainerExtendedResourceRequest,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    ExtendedResourceClasses,
    FrozenMap,
    ObjectMeta,
    OwnerReference,
    Pod,
    Quantity,
    ResourceClaim,
    dra_backed,
    find_extended_claim,
    is_dra_extended_resource_name,
    is_extended_resource_name,
    is_special_claim_name,
    parse_pod,
    requests_and_mappings,
    served_by_dra,
    special_claim,
)

GPU = "example.com/gpu"
GPU1 = "example.com/gpu1"
GPU_INIT = "example.com/gpuinit"
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def device_class(
    name: str, extended: str | None = None, created: datetime.datetime = T0
) -> DeviceClass:
    return DeviceClass(
        metadata=ObjectMeta(name=name, creation_timestamp=created),
        extended_resource_name=extended,
    )


def container(name: str, requests: dict[str, str], sidecar: bool = False) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "image": "x", "resources": {"requests": requests}}
    if sidecar:
        raw["restartPolicy"] = "Always"
    return raw


def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> Pod:
    return parse_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"},
            "spec": {"containers": containers, "initContainers": init or []},
        }
    )


def mapping(container_name: str, resource: str, request: str) -> ContainerExtendedResourceRequest:
    return ContainerExtendedResourceRequest(
        container_name=container_name, resource_name=resource, request_name=request
    )


def request(name: str, class_name: str, count: int) -> DeviceRequest:
    return DeviceRequest(
        name=name, exactly=ExactDeviceRequest(device_class_name=class_name, count=count)
    )


UPSTREAM_CLASSES = ExtendedResourceClasses.of(
    [
        device_class("class", GPU),
        device_class("class1", GPU1),
        device_class("classInit", GPU_INIT),
    ]
)


@pytest.mark.parametrize(
    ("name", "extended", "dra"),
    [
        pytest.param("example.com/gpu", True, True, id="domain-prefixed"),
        pytest.param("cpu", False, False, id="native"),
        pytest.param("kubernetes.io/foo", False, False, id="kubernetes-io-domain"),
        pytest.param("requests.example.com/gpu", False, False, id="quota-prefix"),
        pytest.param("example.com/-bad", False, False, id="not-qualified"),
        pytest.param(DEVICE_CLASS_PREFIX + "gpu", False, True, id="implicit-class-name"),
    ],
)
def test_which_names_a_device_class_can_serve(name: str, extended: bool, dra: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_dra_extended_resource_name(name) is dra


def test_explicit_and_implicit_names_map_to_their_class() -> None:
    classes = ExtendedResourceClasses.of([device_class("gpu", GPU), device_class("fpga")])
    assert classes.class_for(GPU) == "gpu"
    assert classes.class_for(DEVICE_CLASS_PREFIX + "gpu") == "gpu"
    assert classes.class_for(DEVICE_CLASS_PREFIX + "fpga") == "fpga"
    assert classes.class_for("example.com/fpga") is None
    assert classes.class_for("cpu") is None


def test_a_shared_name_goes_to_the_newest_class_then_the_smallest_name() -> None:
    later = T0 + datetime.timedelta(seconds=1)
    newest = ExtendedResourceClasses.of(
        [device_class("a", GPU), device_class("b", GPU, later), device_class("c", GPU)]
    )
    assert newest.class_for(GPU) == "b"
    tie = ExtendedResourceClasses.of([device_class("z", GPU), device_class("m", GPU)])
    assert tie.class_for(GPU) == "m"


def test_only_mapped_non_zero_requests_take_part_and_advertising_nodes_keep_theirs() -> None:
    requests = FrozenMap(
        {
            GPU: Quantity(2),
            "example.com/nic": Quantity(1),
            GPU1: Quantity(0),
            "cpu": Quantity(1),
        }
    )
    backed = dra_backed(requests, UPSTREAM_CLASSES)
    assert dict(backed) == {GPU: Quantity(2)}
    assert served_by_dra(backed, FrozenMap()) == {GPU}
    assert served_by_dra(backed, FrozenMap({GPU: Quantity(0)})) == {GPU}
    assert served_by_dra(backed, FrozenMap({GPU: Quantity(4)})) == frozenset()


CASES = [
    pytest.param(
        pod([container("con0", {GPU: "1", GPU1: "2"})]),
        [
            request("container-0-request-0", "class", 1),
            request("container-0-request-1", "class1", 2),
        ],
        [
            mapping("con0", GPU, "container-0-request-0"),
            mapping("con0", GPU1, "container-0-request-1"),
        ],
        id="one container, two requests",
    ),
    pytest.param(
        pod([container("con0", {GPU: "1"}), container("con1", {GPU1: "2"})]),
        [
            request("container-0-request-0", "class", 1),
            request("container-1-request-0", "class1", 2),
        ],
        [
            mapping("con0", GPU, "container-0-request-0"),
            mapping("con1", GPU1, "container-1-request-0"),
        ],
        id="two containers, two requests",
    ),
    pytest.param(
        pod([container("con0", {GPU: "1"})], [container("init-con0", {GPU_INIT: "2"})]),
        [
            request("container-0-request-0", "classInit", 2),
            request("container-1-request-0", "class", 1),
        ],
        [
            mapping("con0", GPU, "container-1-request-0"),
            mapping("init-con0", GPU_INIT, "container-0-request-0"),
        ],
        id="one init container, one regular container, one request",
    ),
    pytest.param(
        pod(
            [container("con0", {GPU: "1"})],
            [container("init-con0", {GPU_INIT: "1"}), container("init-con1", {GPU_INIT: "2"})],
        ),
        [
            request("container-1-request-0", "classInit", 2),
            request("container-2-request-0", "class", 1),
        ],
        [
            mapping("con0", GPU, "container-2-request-0"),
            mapping("init-con0", GPU_INIT, "container-1-request-0"),
            mapping("init-con1", GPU_INIT, "container-1-request-0"),
        ],
        id="three containers (two are init container), two requests",
    ),
    pytest.param(
        pod(
            [container("con0", {GPU: "1"})],
            [
                container("init-con0", {GPU_INIT: "1"}),
                container("sidecar-con1", {GPU_INIT: "1"}, sidecar=True),
                container("init-con2", {GPU_INIT: "2"}),
            ],
        ),
        [
            request("container-1-request-0", "classInit", 1),
            request("container-2-request-0", "classInit", 2),
            request("container-3-request-0", "class", 1),
        ],
        [
            mapping("con0", GPU, "container-3-request-0"),
            mapping("sidecar-con1", GPU_INIT, "container-1-request-0"),
            mapping("init-con0", GPU_INIT, "container-1-request-0"),
            mapping("init-con2", GPU_INIT, "container-2-request-0"),
        ],
        id="four containers (two are init container, one sidecar), three requests",
    ),
    pytest.param(
        pod([container("con0", {"cpu": "1", GPU: "2", "memory": "1Gi"})]),
        [request("container-0-request-1", "class", 2)],
        [mapping("con0", GPU, "container-0-request-1")],
        id="index among all of the container's sorted request names",
    ),
]


@pytest.mark.parametrize(("subject", "want_requests", "want_mappings"), CASES)
def test_requests_and_mappings_as_upstream_builds_them(
    subject: Pod,
    want_requests: list[DeviceRequest],
    want_mappings: list[ContainerExtendedResourceRequest],
) -> None:
    resources = dra_backed(subject.effective_requests, UPSTREAM_CLASSES)
    got_requests, got_mappings = requests_and_mappings(subject, resources, UPSTREAM_CLASSES)
    assert list(got_requests) == want_requests
    assert list(got_mappings) == want_mappings


def test_the_special_claim_is_named_owned_and_annotated_as_upstream_creates_it() -> None:
    subject = pod([container("con0", {GPU: "2"})])
    built = special_claim(subject, [GPU], UPSTREAM_CLASSES)
    assert built is not None
    meta = built.claim.metadata
    assert is_special_claim_name(meta.name)
    assert meta.generate_name == "p-extended-resources-"
    assert meta.namespace == "ns"
    assert dict(meta.annotations) == {names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    assert meta.owner_references == (
        OwnerReference(api_version="v1", kind="Pod", name="p", uid="pod-uid", controller=True),
    )
    assert built.claim.spec.requests == (request("container-0-request-0", "class", 2),)
    assert built.mappings == (mapping("con0", GPU, "container-0-request-0"),)
    assert special_claim(subject, [], UPSTREAM_CLASSES) is None


def test_an_earlier_attempts_claim_is_found_by_annotation_and_controller() -> None:
    subject = pod([container("con0", {GPU: "2"})])
    owner = OwnerReference(api_version="v1", kind="Pod", name="p", uid="pod-uid", controller=True)
    annotated = FrozenMap({names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"})
    other = ResourceClaim(
        metadata=ObjectMeta(name="other", namespace="ns", owner_references=(owner,))
    )
    stale = ResourceClaim(
        metadata=ObjectMeta(
            name="p-extended-resources-x1",
            namespace="ns",
            annotations=annotated,
            owner_references=(owner,),
        )
    )
    assert find_extended_claim(subject, [other]) is None
    assert find_extended_claim(subject, [other, stale]) is stale
