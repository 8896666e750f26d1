"""DefaultBinder (Bind): bind the pod to its node with a `pods/binding` subresource.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/defaultbinder. The plugin stays pure:
it writes through the `PodBinder` the scheduler's Handle offers (`BinderHandle`), which posts
the Binding (namespace, name and uid of the pod, target Node). A failed write becomes an Error
status, as upstream's `AsStatus(err)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Handle,
    Status,
    error,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.errors import DRAOperatorError
from dra_operator.model import Pod

NAME = "DefaultBinder"


class PodBinder(Protocol):
    """Creates the Binding of a pod to a node; raises a DRAOperatorError when that fails."""

    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None: ...


@runtime_checkable
class BinderHandle(Protocol):
    """A Handle through which Bind plugins write."""

    @property
    def pod_binder(self) -> PodBinder: ...


class DefaultBinder:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        handle = self._handle
        if not isinstance(handle, BinderHandle):
            return error("the scheduler offers no pod binder").with_plugin(NAME)
        meta = pod.metadata
        try:
            await handle.pod_binder.bind(meta.namespace, meta.name, meta.uid, node_name)
        except DRAOperatorError as e:
            return error(str(e)).with_plugin(NAME)
        return SUCCESS


def new(args: Mapping[str, object], handle: Handle) -> DefaultBinder:
    check_known(args, "args", ())
    return DefaultBinder(handle)
