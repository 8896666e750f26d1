"""Where the API server is and who we are to it: kubeconfig files and in-cluster config.

Supports what our own deployments and the local control plane use: client certificates, bearer
tokens (inline or from a file, re-read on every connection so projected tokens may rotate) and
a CA bundle, each given as a file path or as base64 `*-data`. Exec plugins and auth-provider
entries are refused with a clear message rather than half-supported.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from dra_operator.errors import InvalidObjectError

__all__ = ["ClusterConfig", "load_config", "load_incluster_config", "load_kubeconfig"]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterConfig:
    """Connection settings for one API server and one identity.

    PEM material is held as bytes so a config built from `*-data` fields needs no files.
    """

    server: str
    ca_pem: bytes | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    token: str | None = None
    token_file: Path | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None

    def bearer_token(self) -> str | None:
        """The token to send now; a token file is re-read so rotated tokens take effect."""
        if self.token_file is not None:
            return self.token_file.read_text().strip()
        return self.token

    def ssl_context(self) -> ssl.SSLContext | bool:
        """A TLS context trusting the configured CA and presenting the client certificate."""
        if not self.server.startswith("https://"):
            return False
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode() if self.ca_pem else None)
        if self.insecure_skip_tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.client_cert_pem is not None and self.client_key_pem is not None:
            _load_client_pair(ctx, self.client_cert_pem, self.client_key_pem)
        return ctx


def _load_client_pair(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    # The ssl module loads key pairs only from files: write a private temporary directory
    # (mode 0700) and remove it as soon as the context holds the pair.
    with tempfile.TemporaryDirectory(prefix="dra-operator-tls-") as tmp:
        cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert.write_bytes(cert_pem)
        key.touch(mode=0o600)
        key.write_bytes(key_pem)
        ctx.load_cert_chain(cert, key)


def load_kubeconfig(path: str | os.PathLike[str], *, context: str | None = None) -> ClusterConfig:
    """Read one context of a kubeconfig file (its current context by default)."""
    source = str(path)
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidObjectError("", f"cannot read kubeconfig: {exc}", source=source) from exc
    if not isinstance(doc, dict):
        raise InvalidObjectError("", "kubeconfig is not a mapping", source=source)
    base = Path(path).resolve().parent
    name = context or doc.get("current-context")
    if not name:
        raise InvalidObjectError("current-context", "no context selected", source=source)
    ctx = _named(doc, "contexts", "context", name, source)
    cluster = _named(doc, "clusters", "cluster", ctx.get("cluster"), source)
    user = _named(doc, "users", "user", ctx.get("user"), source) if ctx.get("user") else {}
    for unsupported in ("exec", "auth-provider"):
        if unsupported in user:
            raise InvalidObjectError(
                f"users[{ctx.get('user')}].{unsupported}", "not supported", source=source
            )
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        where = f"clusters[{ctx.get('cluster')}].server"
        raise InvalidObjectError(where, "required", source=source)
    token_file = user.get("tokenFile")
    return ClusterConfig(
        server=server.rstrip("/"),
        ca_pem=_pem(cluster, "certificate-authority", base),
        client_cert_pem=_pem(user, "client-certificate", base),
        client_key_pem=_pem(user, "client-key", base),
        token=user.get("token"),
        token_file=base / token_file if token_file else None,
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify", False)),
        tls_server_name=cluster.get("tls-server-name"),
    )


def _named(doc: Mapping[str, Any], key: str, inner: str, name: object, source: str) -> Any:
    for entry in doc.get(key) or ():
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(inner)
            if isinstance(value, dict):
                return value
    raise InvalidObjectError(key, f"no entry named {name!r}", source=source)


def _pem(section: Mapping[str, Any], field: str, base: Path) -> bytes | None:
    data = section.get(f"{field}-data")
    if data:
        return base64.b64decode(str(data))
    path = section.get(field)
    if path:
        return (base / str(path)).read_bytes()
    return None


def load_incluster_config() -> ClusterConfig:
    """The pod's service account, as client-go's rest.InClusterConfig reads it."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise InvalidObjectError(
            "", "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT unset"
        )
    if ":" in host:
        host = f"[{host}]"
    return ClusterConfig(
        server=f"https://{host}:{port}",
        ca_pem=(_SA_DIR / "ca.crt").read_bytes(),
        token_file=_SA_DIR / "token",
    )


def load_config(kubeconfig: str | os.PathLike[str] | None = None) -> ClusterConfig:
    """An explicit kubeconfig, else $KUBECONFIG (first entry), else in-cluster, else ~/.kube."""
    if kubeconfig:
        return load_kubeconfig(kubeconfig)
    env = os.environ.get("KUBECONFIG")
    if env:
        return load_kubeconfig(env.split(os.pathsep)[0])
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return load_incluster_config()
    return load_kubeconfig(Path.home() / ".kube" / "config")
