"""`ClassesHandle`: the framework's Handle with the DeviceClasses, for NodeResourcesFit.

With DRA-backed extended resources (DRAExtendedResource), upstream's NodeResourcesFit does not
count a resource a DeviceClass maps on a node that does not advertise it: DynamicResources
fits it from devices (kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/noderesources,
`fitsRequest`). The decision's default framework and the diagnosis use this Handle; the live
scheduler's `LiveHandle` extends it with the storage listers and writers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dra_operator.controllers.scheduler.framework import FrameworkHandle, Snapshot
from dra_operator.model import DeviceClass, ExtendedResourceClasses


class ClassesHandle(FrameworkHandle):
    """A Handle that knows the DeviceClasses besides the snapshot: NodeResourcesFit leaves the
    extended resources they serve to DynamicResources. `classes` is read once per cycle (not
    once per node); None: DRA serves no extended resource (DRAExtendedResource off)."""

    __slots__ = ("_classes", "_extended_classes")

    def __init__(self, classes: Callable[[], Iterable[DeviceClass]] | None) -> None:
        super().__init__()
        self._classes = classes
        self._extended_classes: ExtendedResourceClasses | None = None  # this cycle's

    def set_snapshot(self, snapshot: Snapshot) -> None:
        super().set_snapshot(snapshot)
        self._extended_classes = None  # read again, once, in the new cycle

    @property
    def extended_resource_classes(self) -> ExtendedResourceClasses:
        """NodeResourcesFit's DeviceClass mapping, from the classes as the cycle found them."""
        if self._extended_classes is None:
            found = self._classes() if self._classes is not None else ()
            self._extended_classes = ExtendedResourceClasses.of(found)
        return self._extended_classes
