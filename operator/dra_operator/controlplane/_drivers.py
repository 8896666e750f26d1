"""The simulated DRA driver (`dra-operator driver`, docs/driver.md) on the real nodes.

Started as a process of its own per node (the driver package is a sibling layer, so it is
run, not imported), recorded as one more component that `down` stops.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path

from dra_operator.controlplane._state import (
    ControlPlaneState,
    read_state,
    start_component,
    wait_ready,
)
from dra_operator.errors import ControlPlaneError

__all__ = ["start_drivers"]

Progress = Callable[[str], None]
_REGISTERED = '"event": "driver.registered"'


def start_drivers(
    state_dir: Path,
    inventory: Path,
    *,
    driver: str | None = None,
    timeout: float = 60.0,
    progress: Progress = lambda _: None,
) -> ControlPlaneState:
    """Start `dra-operator driver` (the simulated DRA driver, docs/driver.md) on every node
    of the control plane in `state_dir`, each as one more component that `down` stops.

    Each runs as its node (`system:node:<name>`: the Node authorizer lets it publish its own
    slices and read the claims of its pods), registers in the node's kubelet root and writes
    CDI specs where the node's containerd reads them. Returns once every kubelet has accepted
    its driver (the driver logs `driver.registered`).
    """
    state = read_state(state_dir)
    if state is None or not state.nodes:
        raise ControlPlaneError(f"no control plane with nodes in {state_dir}")
    program = Path(sys.executable).with_name("dra-operator")
    for node in state.nodes:
        name = f"driver-{node.name}-{driver or inventory.stem}"
        progress(f"{node.name}: starting the simulated driver ({name})")
        argv = [
            str(program),
            "driver",
            f"--node={node.name}",
            f"--devices={inventory.resolve()}",
            f"--kubelet-root={node.kubelet_dir}",
            f"--cdi-dir={node.cdi_dir}",
            f"--state-dir={Path(node.directory) / name}",
            f"--kubeconfig={Path(node.directory) / 'kubelet.kubeconfig'}",
            "--log-format=json",
            *([f"--driver={driver}"] if driver else []),
        ]
        state = start_component(state, name, argv)
        registered = functools.partial(_logged, Path(state.components[-1].log), _REGISTERED)
        wait_ready(state, name, registered, timeout)
    return state


def _logged(path: Path, text: str) -> bool:
    try:
        return text in path.read_text(errors="replace")
    except OSError:
        return False
