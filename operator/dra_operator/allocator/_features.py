"""The allocator's feature set, mirroring upstream's `structured.Features`.

Each flag switches one DRA behaviour the way the matching kube-scheduler feature gate does, so
one allocator can answer exactly as a given Kubernetes release would. The defaults per minor come
from the versioned feature-gate table (upstream-dra.md section 7.3); DeviceBindingAndStatus needs
both DRADeviceBindingConditions and DRAResourceClaimDeviceStatus, as upstream's `Set()` says.

`release` is not a gate: it picks which release of upstream's allocator library the ungated
behaviour follows (36: dynamic-resource-allocation v0.36.5, 37: v0.37.2), because 1.37 changed
results without a gate (result configs, distinctAttribute within one request, `All` with
shared devices, list-typed attributes with the gate off, CEL runtime error texts, capacity
rounding in the step's format and fail-closed capacity arithmetic).

The four 1.37 gates (compatibility groups, derived attributes, fractional capacity range,
optional node operations) are off by default, as upstream: three are alpha, and
DRAFractionalCapacityRange is beta but on only with `--min-compatibility-version=1.37`. They
exist only in the 1.37 library: with `release` 36 they are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from dra_operator.errors import AllocationInputError

OLDEST_RELEASE, NEWEST_RELEASE = 36, 37  # allocator library releases we follow

# minor -> flags on by default in kube-scheduler of that release
_DEFAULTS: dict[int, frozenset[str]] = {
    # 1.27-1.30 (v1alpha2): none of these behaviours exists; 1.30's structured parameters
    # (named resources) are allocated by `allocator.allocate_named`, not by these rules.
    27: frozenset(),
    28: frozenset(),
    29: frozenset(),
    30: frozenset(),
    31: frozenset({"admin_access"}),  # ungated in 1.31 (v1alpha3 `adminAccess`), gated from 1.32
    32: frozenset(),
    33: frozenset(),
    34: frozenset({"admin_access", "prioritized_list"}),
    35: frozenset({"admin_access", "prioritized_list"}),
    36: frozenset(
        {
            "admin_access",
            "prioritized_list",
            "partitionable_devices",
            "device_taints",
            "device_binding_and_status",
            "consumable_capacity",
        }
    ),
    37: frozenset(
        {
            "admin_access",
            "prioritized_list",
            "partitionable_devices",
            "device_taints",
            "device_binding_and_status",
            "consumable_capacity",
        }
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    """Which gated DRA behaviours are on; everything off is the 1.32/1.33 core."""

    admin_access: bool = False
    prioritized_list: bool = False
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_and_status: bool = False
    consumable_capacity: bool = False
    list_type_attributes: bool = False
    compatibility_groups: bool = False  # DRADeviceCompatibilityGroups (1.37 alpha)
    derived_attributes: bool = False  # DRADerivedAttributes (1.37 alpha)
    fractional_capacity_range: bool = False  # DRAFractionalCapacityRange (1.37 beta, off)
    optional_node_operations: bool = False  # DRAOptionalNodeOperations (1.37 alpha)
    release: int = OLDEST_RELEASE

    def __post_init__(self) -> None:
        newer = (
            self.compatibility_groups
            or self.derived_attributes
            or self.fractional_capacity_range
            or self.optional_node_operations
        )
        if newer and self.release < 37:
            raise AllocationInputError(
                f"allocator features: 1.37 gates need release 37, not {self.release}"
            )

    @property
    def is_stable_tier(self) -> bool:
        """Whether upstream would pick its "stable" allocator for these features.

        Upstream picks the first of stable, incubating, experimental that supports every
        requested feature; stable lacks consumable capacity, binding conditions and list-typed
        attributes. Stable ignores capacity requests, rejects distinctAttribute as an empty
        constraint and ignores bindsToNode; its pool order is Go map order (random), for
        which our (sorted) order is one valid outcome.
        """
        return not (
            self.consumable_capacity
            or self.device_binding_and_status
            or self.fractional_capacity_range
            or self.is_experimental_tier
        )

    @property
    def is_experimental_tier(self) -> bool:
        """Whether upstream would pick its "experimental" allocator: only it supports list-typed
        attributes and three of the 1.37 gates. Only it reads `skipNodeOperations` (the other
        tiers allocate such devices as any other, without copying the list)."""
        return (
            self.list_type_attributes
            or self.optional_node_operations
            or self.derived_attributes
            or self.compatibility_groups
        )

    @classmethod
    def for_kubernetes(cls, version: str) -> Features:
        """The default gates of kube-scheduler for a minor such as ``"1.36"`` or ``"v1.36.4"``."""
        parts = version.removeprefix("v").split(".")
        if len(parts) < 2 or parts[0] != "1" or not parts[1].isdigit():
            raise AllocationInputError(f"kubernetes version {version}: expected 1.<minor>")
        minor = int(parts[1])
        if minor not in _DEFAULTS:
            known = ", ".join(f"1.{m}" for m in sorted(_DEFAULTS))
            raise AllocationInputError(f"kubernetes version {version}: not one of {known}")
        release = min(max(minor, OLDEST_RELEASE), NEWEST_RELEASE)
        return cls(release=release, **{name: True for name in _DEFAULTS[minor]})

    @property
    def since_137(self) -> bool:
        """Whether the ungated behaviour is 1.37's (see `release`)."""
        return self.release >= 37

    @classmethod
    def everything(cls, release: int = OLDEST_RELEASE) -> Features:
        """Every behaviour on, including the alpha list-typed attributes."""
        return cls(
            release=release,
            admin_access=True,
            prioritized_list=True,
            partitionable_devices=True,
            device_taints=True,
            device_binding_and_status=True,
            consumable_capacity=True,
            list_type_attributes=True,
        )
