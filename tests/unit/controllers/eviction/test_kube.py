"""The wire shape of the eviction controller's pod status patch."""

from __future__ import annotations

from dra_operator.controllers.eviction import disruption_patch

from .builders import T0


def test_disruption_patch_is_upstreams_condition() -> None:
    patch = disruption_patch(T0)
    assert patch == {
        "status": {
            "conditions": [
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "DeletionByDeviceTaintManager",
                    "message": "Device Taint manager: deleting due to NoExecute taint",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        }
    }
