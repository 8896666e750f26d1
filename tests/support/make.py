"""Typed builders for the API objects tests feed the operator, in the style of upstream's
scheduler testing wrappers (`st.MakePod().Name("p").Obj()`, kube-scheduler's
`pkg/scheduler/testing/wrappers.go`): start from a valid object, change what the test is
about, take the raw manifest with `obj()`.

```python
MakePod().name("web-0").namespace("ml").version("5").claim("gpu", template="gpu").obj()
MakeClaim().version("3").request("r", "gpu-class").allocated("gpu.example.com", "pool", "gpu-0")
MakeNode().name("n1").version("1").obj()
```

Each `obj()` is a fresh deep copy, so a builder can be reused for variants. The manifests are
resource.k8s.io/v1 and core/v1, as the API server returns them.
"""

from __future__ import annotations

import copy
from typing import Any, Self

Manifest = dict[str, Any]


class _Make:
    _manifest: Manifest

    def name(self, name: str) -> Self:
        self._manifest["metadata"]["name"] = name
        return self

    def namespace(self, namespace: str) -> Self:
        self._manifest["metadata"]["namespace"] = namespace
        return self

    def uid(self, uid: str) -> Self:
        self._manifest["metadata"]["uid"] = uid
        return self

    def version(self, resource_version: str) -> Self:
        self._manifest["metadata"]["resourceVersion"] = resource_version
        return self

    def labels(self, **labels: str) -> Self:
        self._manifest["metadata"].setdefault("labels", {}).update(labels)
        return self

    def annotations(self, annotations: dict[str, str]) -> Self:
        self._manifest["metadata"].setdefault("annotations", {}).update(annotations)
        return self

    def managed_by(self, manager: str, fields: Manifest) -> Self:
        """A managedFields entry: `manager` owns `fields` (a fieldsV1 value)."""
        entry = {"manager": manager, "operation": "Update", "fieldsV1": fields}
        self._manifest["metadata"].setdefault("managedFields", []).append(entry)
        return self

    def obj(self) -> Manifest:
        return copy.deepcopy(self._manifest)


class MakePod(_Make):
    """A pod `p` in `ns` with one container, no claims, no node."""

    def __init__(self) -> None:
        self._manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"namespace": "ns", "name": "p", "uid": "pod-uid"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }

    def scheduler(self, name: str) -> Self:
        self._manifest["spec"]["schedulerName"] = name
        return self

    def node(self, name: str) -> Self:
        self._manifest["spec"]["nodeName"] = name
        return self

    def claim(self, name: str, *, claim: str | None = None, template: str | None = None) -> Self:
        """A `spec.resourceClaims` entry naming a claim or a template (one of them)."""
        entry: Manifest = {"name": name}
        if claim is not None:
            entry["resourceClaimName"] = claim
        if template is not None:
            entry["resourceClaimTemplateName"] = template
        self._manifest["spec"].setdefault("resourceClaims", []).append(entry)
        return self


class MakeClaim(_Make):
    """A ResourceClaim `c` in `ns` with one request `r` for one device of class `c`,
    unallocated."""

    def __init__(self) -> None:
        self._manifest = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"namespace": "ns", "name": "c", "uid": "claim-uid"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}},
            "status": {},
        }

    def requests(self, requests: Any) -> Self:
        """`spec.devices.requests` as given (a test of parse errors passes what it likes)."""
        self._manifest["spec"]["devices"]["requests"] = requests
        return self

    def allocated(self, driver: str, pool: str, device: str, *, request: str = "r") -> Self:
        """One more device in `status.allocation`."""
        allocation = self._manifest["status"].setdefault("allocation", {"devices": {}})
        allocation["devices"].setdefault("results", []).append(
            {"request": request, "driver": driver, "pool": pool, "device": device}
        )
        return self

    def allocation(self, allocation: Manifest) -> Self:
        """`status.allocation` as given (other API versions' shapes)."""
        self._manifest["status"]["allocation"] = allocation
        return self


class MakeNode(_Make):
    """A node `n`."""

    def __init__(self) -> None:
        self._manifest = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
