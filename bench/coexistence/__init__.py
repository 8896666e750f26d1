"""bench.coexistence: dra-operator beside kube-scheduler and kube-controller-manager.

The race of two allocators (docs/coexistence.md): repeated small bursts of pods for fewer devices
than pods, half naming kube-scheduler, half dra-operator, on a local control plane that runs
both upstream components leader-elected. `python -m bench.coexistence` measures violations
per N runs for one configuration; tests/integration/test_coexistence.py asserts there are none
in the configuration we ship.
"""

from bench.coexistence._race import (
    DEVICES,
    ROUTING_POLICIES,
    Components,
    RaceResult,
    delete_scene,
    install_routing,
    race_once,
    remove_routing,
    summarize,
)

__all__ = [
    "DEVICES",
    "ROUTING_POLICIES",
    "Components",
    "RaceResult",
    "delete_scene",
    "install_routing",
    "race_once",
    "remove_routing",
    "summarize",
]
