"""Kubeconfigs whose user is an `exec` credential plugin (tests/data/exec_credential.py) or
the `oidc` auth provider.

The plugin runs once at load time; its token is kept until its expiry (minus a small skew) or
until the server rejects it, then fetched again by running the plugin once more.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml
from tests.support.kubeconfigs import exec_kubeconfig

from dra_operator.kube import load_kubeconfig


def _runs(calls: Path) -> int:
    return len(calls.read_text().splitlines())


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("first")
    return path


async def test_token_is_kept_until_rejected_then_fetched_again(
    tmp_path: Path, token_file: Path
) -> None:
    calls = tmp_path / "calls"
    path = exec_kubeconfig(tmp_path / "kc", "https://h:1", token_file, calls, ttl=None)
    config = load_kubeconfig(path)
    assert _runs(calls) == 1
    assert [await config.authorization() for _ in range(3)] == ["Bearer first"] * 3
    assert _runs(calls) == 1
    token_file.write_text("second")
    config.rejected()
    assert await config.authorization() == "Bearer second"
    assert _runs(calls) == 2


async def test_token_is_fetched_again_when_it_expires(tmp_path: Path, token_file: Path) -> None:
    calls = tmp_path / "calls"
    long = load_kubeconfig(
        exec_kubeconfig(tmp_path / "long", "https://h:1", token_file, calls, ttl=3600)
    )
    await long.authorization()
    await long.authorization()
    assert _runs(calls) == 1
    # Within the refresh skew of its expiry already: every use runs the plugin again.
    short = load_kubeconfig(
        exec_kubeconfig(tmp_path / "short", "https://h:1", token_file, calls, ttl=1)
    )
    token_file.write_text("rotated")
    assert await short.authorization() == "Bearer rotated"
    assert _runs(calls) == 3


async def test_an_oidc_auth_provider_token_is_sent_while_valid(tmp_path: Path) -> None:
    """kubernetes-asyncio reads the `oidc` auth provider: an unexpired id-token is used as is
    (an expired one would be refreshed with `refresh-token` at the issuer)."""
    claims = {"iss": "https://issuer.example", "exp": 4102444800}  # 2100-01-01
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    id_token = f"e30.{payload}.c2ln"
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://h:1"}}],
        "users": [
            {
                "name": "oidc",
                "user": {
                    "auth-provider": {
                        "name": "oidc",
                        "config": {"client-id": "k", "id-token": id_token},
                    }
                },
            }
        ],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "oidc"}}],
        "current-context": "c",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    config = load_kubeconfig(path)
    assert await config.authorization() == f"Bearer {id_token}"
