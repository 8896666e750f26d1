"""The operator speaks the newest resource.k8s.io version the targeted server serves.

Covers: 1.27, 1.28 and 1.29 -> v1alpha2 for claims, templates and classes (ResourceClasses); 1.30 ->
the same plus slices and the parameter objects of named resources; 1.31 -> v1alpha3, 1.32 ->
v1beta1, 1.33 -> v1beta2, 1.34 and later -> v1 for claims, templates, classes and slices, and
the allocator features of that release (`Features.for_kubernetes`), as discovery reads them from
the server itself.
"""

from __future__ import annotations

import pytest

from dra_operator.allocator import Features
from dra_operator.app import ServerInfo

pytestmark = pytest.mark.controlplane

NEWEST = {
    27: "v1alpha2",
    28: "v1alpha2",
    29: "v1alpha2",
    30: "v1alpha2",
    31: "v1alpha3",
    32: "v1beta1",
    33: "v1beta2",
}  # v1 from 1.34 on


async def test_discovery_picks_the_release_version_and_features(served: ServerInfo) -> None:
    expected = NEWEST.get(served.minor, "v1")
    kinds = ["resourceclaims", "resourceclaimtemplates", "deviceclasses", "resourceslices"]
    if served.minor <= 30:
        assert served.resource("deviceclasses").plural == "resourceclasses"
        assert served.classic
    if served.minor == 30:
        kinds += ["resourceclassparameters", "resourceclaimparameters"]
    elif served.minor < 30:  # 1.27-1.29: classic DRA only
        kinds.remove("resourceslices")
        assert "resourceslices" not in served.versions
    else:
        assert "resourceclaimparameters" not in served.versions
    for plural in kinds:
        assert served.versions[plural] == expected, plural
    if served.minor <= 37:
        assert served.features == Features.for_kubernetes(f"1.{served.minor}")
