"""A NoExecute device taint evicts the pod using the device, on whichever cluster is targeted.

The taint comes from a DeviceTaintRule made with `dra-operator taint --via rule` on the one
device the pod's claim got. Whoever runs the eviction (the operator, or kube-controller-manager
in a full cluster) marks the pod for deletion and records a DeviceTaintManagerEviction event;
a kubelet then finishes the deletion, so the pod is either terminating or gone. A pod on
another device stays. The rule is removed and `dra-operator verify` is clean afterwards.
Releases whose scheduler applies no DeviceTaintRules by default (up to 1.35: device taints are
alpha there) have no such scenario: the test is skipped there, saying so.
"""

from __future__ import annotations

import pytest
from tests.support.operator import wait_for

from e2e._scene import Scene, devices

pytestmark = pytest.mark.controlplane


async def test_no_execute_device_taint_rule_evicts_the_pod(scene: Scene) -> None:
    if not scene.served.taint_rules_in_effect:
        pytest.skip(f"{scene.served.git_version}: DeviceTaintRules are not in effect by default")
    await scene.template()
    await scene.pod("victim")
    await scene.pod("bystander")
    _, claim = await scene.placed("victim")
    await scene.placed("bystander")
    ((_, pool, device),) = devices(claim)
    rule = await scene.taint(pool, device)

    async def evicted() -> bool:
        pod = await scene.get_pod("victim")
        return pod is None or bool(pod["metadata"].get("deletionTimestamp"))

    await wait_for(evicted, what="pod victim evicted")
    events = await wait_for(
        lambda: scene.events("victim", "DeviceTaintManagerEviction"),
        what="the eviction event of victim",
    )
    assert events[0] == "Marking for deletion"
    bystander = await scene.get_pod("bystander")
    assert bystander is not None and not bystander["metadata"].get("deletionTimestamp")
    await scene.untaint(rule)
    await scene.verify_clean()
