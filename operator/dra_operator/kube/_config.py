"""Where the API server is and who we are to it: kubeconfig files and in-cluster config.

kubernetes-asyncio reads them (we use its config loaders only, never its typed client): merged
$KUBECONFIG lists, contexts, CA bundles and client certificates as files or `*-data`, tokens,
`exec` credential plugins (token or client certificate) and the `oidc` and `gcp`
auth providers, and the pod's service account. Its answer becomes a `ClusterConfig` for our
raw-JSON client and kopf. Two of its habits are corrected here: a `tokenFile` is read once
(we re-read it on every request, so projected tokens may rotate), and an exec token without
`expirationTimestamp` would be fetched again for every request (`Credentials` keeps it until
a 401). Loading is synchronous: the library's coroutines run on a private event loop, so that
commands may load before starting theirs and tests may load inside theirs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dra_operator.errors import InvalidObjectError
from dra_operator.kube._credentials import Credentials, Token

if TYPE_CHECKING:
    from kubernetes_asyncio.client import Configuration
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader

__all__ = ["ClusterConfig", "load_config", "load_incluster_config", "load_kubeconfig"]

T = TypeVar("T")
_Fetch = Callable[[], Awaitable[Token]]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterConfig:
    """Connection settings for one API server and one identity.

    PEM material is held as bytes so a config built from `*-data` fields needs no files.
    `credentials`, when set, supplies the Authorization header (exec plugins, auth providers);
    otherwise `token` or `token_file` does.
    """

    server: str
    ca_pem: bytes | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    token: str | None = None
    token_file: Path | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    namespace: str | None = None
    """The context's namespace (in-cluster: the pod's), for commands given no `-n`."""
    credentials: Credentials | None = dataclasses.field(default=None, compare=False, repr=False)

    def bearer_token(self) -> str | None:
        """The static token; a token file is re-read so rotated tokens take effect."""
        if self.token_file is not None:
            return self.token_file.read_text().strip()
        return self.token

    async def authorization(self) -> str | None:
        """The Authorization header value to send now, if any."""
        if self.credentials is not None:
            return await self.credentials.authorization()
        token = self.bearer_token()
        return f"Bearer {token}" if token else None

    def rejected(self) -> None:
        """The server answered 401: refreshable credentials are fetched anew next time."""
        if self.credentials is not None:
            self.credentials.invalidate()

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


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="kubeconfig") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def load_kubeconfig(path: str | os.PathLike[str], *, context: str | None = None) -> ClusterConfig:
    """One context (the current one by default) of a kubeconfig, or of a `:`-separated list
    merged as kubectl merges $KUBECONFIG."""
    from kubernetes_asyncio.config import ConfigException

    source = str(path)
    try:
        return _run(_load_kubeconfig(source, context))
    except (ConfigException, OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
        # The library asserts that the chosen context and its cluster exist.
        message = str(exc) or f"context {context!r} or its cluster not found"
        raise InvalidObjectError("", message, source=source) from exc


async def _load_kubeconfig(paths: str, context: str | None) -> ClusterConfig:
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader, KubeConfigMerger

    merged = KubeConfigMerger(paths).config
    if merged is None:
        raise FileNotFoundError(f"no kubeconfig at {paths}")
    if not (context or merged.value.get("current-context")):
        raise ValueError("no context selected: current-context is empty and none was given")
    loader = KubeConfigLoader(config_dict=merged, config_base_path=None, active_context=context)
    settings = await _settings(loader)
    user = _user(merged.value, loader)
    credentials, token, token_file = None, user.get("token"), None
    if "exec" in user or "auth-provider" in user:
        credentials = Credentials(_refresher(loader, user), _token(loader, settings))
    elif user.get("tokenFile") and not token:
        token_file = Path(_base(merged.value, loader)) / user["tokenFile"]
    elif "username" in user:  # basic authentication, as the library encoded it
        credentials = Credentials(_static(settings), _token(loader, settings))
    server = settings.host
    if not server:
        raise ValueError("the cluster has no server")
    return ClusterConfig(
        server=server.rstrip("/"),
        ca_pem=_read(settings.ssl_ca_cert),
        client_cert_pem=_read(settings.cert_file),
        client_key_pem=_read(settings.key_file),
        token=token,
        token_file=token_file,
        insecure_skip_tls_verify=not settings.verify_ssl,
        tls_server_name=settings.tls_server_name,
        namespace=(loader.current_context or {}).get("context", {}).get("namespace"),
        credentials=credentials,
    )


async def _settings(loader: KubeConfigLoader) -> Configuration:
    from kubernetes_asyncio.client import Configuration

    settings: Configuration = type.__call__(Configuration)  # not the process-wide default
    await loader.load_and_set(settings)
    return settings


def _token(loader: KubeConfigLoader, settings: Configuration) -> Token:
    header = settings.api_key.get("BearerToken")
    return Token(header, getattr(loader, "exec_plugin_expiry", None))


def _refresher(loader: KubeConfigLoader, user: Mapping[str, Any]) -> _Fetch:
    """How to fetch a fresh token: run the exec plugin again, or ask the auth provider
    (which refreshes an expired OIDC id-token with its refresh token)."""
    from kubernetes_asyncio.config import ConfigException
    from kubernetes_asyncio.config.dateutil import parse_rfc3339
    from kubernetes_asyncio.config.exec_provider import ExecProvider
    from kubernetes_asyncio.config.kube_config import ConfigNode

    async def run_plugin() -> Token:
        try:
            status = await ExecProvider(ConfigNode("exec", user["exec"])).run()
        except ConfigException as exc:  # the client reports OSErrors as transport errors
            raise OSError(f"exec credential plugin: {exc}") from exc
        expiry = status.get("expirationTimestamp")
        token = status.get("token")
        return Token(
            f"Bearer {token}" if token else None, parse_rfc3339(expiry) if expiry else None
        )

    async def ask_provider() -> Token:
        return _token(loader, await _settings(loader))

    return run_plugin if "exec" in user else ask_provider


def _static(settings: Configuration) -> _Fetch:
    header = settings.api_key.get("BearerToken")

    async def same() -> Token:
        return Token(header)

    return same


def _user(doc: Mapping[str, Any], loader: KubeConfigLoader) -> dict[str, Any]:
    name = (loader.current_context or {}).get("context", {}).get("user")
    for entry in doc.get("users") or ():
        value = getattr(entry, "value", entry)
        if value.get("name") == name:
            user: dict[str, Any] = value.get("user") or {}
            return user
    return {}


def _base(doc: Mapping[str, Any], loader: KubeConfigLoader) -> str:
    """The folder of the kubeconfig that defines the current user (relative paths)."""
    name = (loader.current_context or {}).get("context", {}).get("user")
    for entry in doc.get("users") or ():
        if getattr(entry, "value", entry).get("name") == name and getattr(entry, "path", None):
            return os.path.dirname(os.path.abspath(str(entry.path)))
    return os.getcwd()


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None


def load_incluster_config() -> ClusterConfig:
    """The pod's service account, as client-go's rest.InClusterConfig reads it; the token
    file is re-read on every request (kubelet rotates projected tokens)."""
    from kubernetes_asyncio.client import Configuration
    from kubernetes_asyncio.config import ConfigException
    from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader

    settings = type.__call__(Configuration)
    token, ca = _SA_DIR / "token", _SA_DIR / "ca.crt"
    try:
        InClusterConfigLoader(str(token), str(ca), try_refresh_token=False).load_and_set(settings)
    except ConfigException as exc:
        raise InvalidObjectError("", f"not in a cluster: {exc}") from exc
    namespace = _SA_DIR / "namespace"
    return ClusterConfig(
        server=settings.host,
        ca_pem=ca.read_bytes(),
        token_file=token,
        namespace=namespace.read_text().strip() if namespace.exists() else None,
    )


def load_config(
    kubeconfig: str | os.PathLike[str] | None = None, *, context: str | None = None
) -> ClusterConfig:
    """An explicit kubeconfig, else $KUBECONFIG (merged), else in-cluster, else ~/.kube."""
    if kubeconfig:
        return load_kubeconfig(kubeconfig, context=context)
    env = os.environ.get("KUBECONFIG")
    if env:
        return load_kubeconfig(env, context=context)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and context is None:
        return load_incluster_config()
    return load_kubeconfig(Path.home() / ".kube" / "config", context=context)
