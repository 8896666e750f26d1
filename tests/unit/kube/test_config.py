"""Reading kubeconfig files and in-cluster settings.

Covers: inline `*-data` and file-path credentials (relative to the kubeconfig's folder), the
current context and an explicit one, bearer tokens inline and from a file (re-read each time),
a missing context or server and a failing exec plugin as InvalidObjectError, and
in-cluster config from the service-account environment.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_operator.errors import InvalidObjectError
from dra_operator.kube import load_config, load_incluster_config, load_kubeconfig


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def _doc(user: dict[str, Any], cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:6443/"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [
            {"name": "ctx", "context": {"cluster": "c", "user": "u"}},
            {"name": "other", "context": {"cluster": "c", "user": "u"}},
        ],
        "current-context": "ctx",
    }


def test_inline_data(tmp_path: Path) -> None:
    b64 = base64.b64encode
    user = {
        "client-certificate-data": b64(b"CERT").decode(),
        "client-key-data": b64(b"KEY").decode(),
    }
    cluster = {"server": "https://h:1", "certificate-authority-data": b64(b"CA").decode()}
    config = load_kubeconfig(_write(tmp_path, _doc(user, cluster)))
    assert (config.server, config.ca_pem) == ("https://h:1", b"CA")
    assert (config.client_cert_pem, config.client_key_pem) == (b"CERT", b"KEY")


def test_file_paths_are_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(b"CA")
    (tmp_path / "token").write_text("secret-1\n")
    cluster = {"server": "https://h:1", "certificate-authority": "ca.crt"}
    config = load_kubeconfig(_write(tmp_path, _doc({"tokenFile": "token"}, cluster)))
    assert config.ca_pem == b"CA"
    assert config.bearer_token() == "secret-1"
    (tmp_path / "token").write_text("secret-2")
    assert config.bearer_token() == "secret-2"


def test_server_trailing_slash_is_dropped_and_token_is_kept(tmp_path: Path) -> None:
    config = load_kubeconfig(_write(tmp_path, _doc({"token": "abc"})), context="other")
    assert config.server == "https://127.0.0.1:6443"
    assert config.bearer_token() == "abc"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param({**_doc({}), "current-context": ""}, "current-context", id="no-context"),
        pytest.param({**_doc({}), "current-context": "nope"}, "nope", id="unknown-context"),
        pytest.param(_doc({}, {"insecure-skip-tls-verify": True}), "no server", id="no-server"),
        pytest.param(
            _doc({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "false"}}),
            "exec: process returned 1",
            id="failing-exec-plugin",
        ),
    ],
)
def test_unusable_kubeconfig(tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError, match=message) as caught:
        load_kubeconfig(_write(tmp_path, doc))
    assert caught.value.source.endswith("kubeconfig")


def test_kubeconfig_env_wins_over_in_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, _doc({"token": "t"}))
    monkeypatch.setenv("KUBECONFIG", f"{path}:/elsewhere")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert load_config().bearer_token() == "t"


def test_in_cluster_requires_the_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(InvalidObjectError, match="not in a cluster"):
        load_incluster_config()


def test_plain_http_needs_no_tls(tmp_path: Path) -> None:
    config = load_kubeconfig(_write(tmp_path, _doc({}, {"server": "http://127.0.0.1:8080"})))
    assert config.ssl_context() is False
