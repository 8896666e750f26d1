"""The simulated driver's own identity on the session control plane.

A user `dra-sim-driver` with a client certificate from the control plane's CA, bound to the
ClusterRole of examples/driver/daemonset.yaml and to nothing else: the driver's tests prove
that the RBAC users install is enough, and that it needs none of the operator's.
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from dra_operator import controlplane
from dra_operator.kube import Client

DRIVER_USER = "dra-sim-driver"
DRIVER_MANIFEST = Path(__file__).resolve().parents[2] / "examples" / "driver" / "daemonset.yaml"


async def driver_kubeconfig(state: controlplane.ControlPlaneState, admin: Client) -> Path:
    """Write `<state>/driver.kubeconfig` for DRIVER_USER and bind the driver's ClusterRole."""
    pki = state.state_dir / "pki"
    ca = controlplane.CertifiedKey((pki / "ca.crt").read_bytes(), (pki / "ca.key").read_bytes())
    client = controlplane.issue_client_cert(ca, DRIVER_USER)
    roles = controlplane.load_cluster_roles(DRIVER_MANIFEST)
    await controlplane.bind_cluster_roles(admin, roles, DRIVER_USER)

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    path = state.state_dir / "driver.kubeconfig"
    path.touch(mode=0o600)
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "local",
                        "cluster": {
                            "server": state.server,
                            "certificate-authority-data": b64(ca.cert_pem),
                        },
                    }
                ],
                "users": [
                    {
                        "name": DRIVER_USER,
                        "user": {
                            "client-certificate-data": b64(client.cert_pem),
                            "client-key-data": b64(client.key_pem),
                        },
                    }
                ],
                "contexts": [
                    {"name": "driver", "context": {"cluster": "local", "user": DRIVER_USER}}
                ],
                "current-context": "driver",
            }
        )
    )
    return path
