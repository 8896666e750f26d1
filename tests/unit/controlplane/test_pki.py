"""Certificates for the local control plane.

Covers: the CA is a CA and self-signed; leaf certificates are signed by it; the serving
certificate names 127.0.0.1 and localhost and is for server auth only; client certificates
carry the user as CN and groups as O (how kube-apiserver reads them); keys match their
certificates; the service-account key pair is RSA.
"""

from __future__ import annotations

import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from dra_operator.controlplane import (
    CertifiedKey,
    issue_client_cert,
    issue_serving_cert,
    new_ca,
    new_sa_key,
)


@pytest.fixture(scope="module")
def ca() -> CertifiedKey:
    return new_ca()


def _public_bytes(key: object) -> bytes:
    assert hasattr(key, "public_bytes")
    data: bytes = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return data


def _key_matches(pair: CertifiedKey) -> bool:
    private = serialization.load_pem_private_key(pair.key_pem, password=None)
    return _public_bytes(private.public_key()) == _public_bytes(pair.certificate.public_key())


def test_ca_is_a_self_signed_ca(ca: CertifiedKey) -> None:
    cert = ca.certificate
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    cert.verify_directly_issued_by(cert)
    assert _key_matches(ca)


def test_serving_cert_names_loopback(ca: CertifiedKey) -> None:
    serving = issue_serving_cert(ca)
    cert = serving.certificate
    cert.verify_directly_issued_by(ca.certificate)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert _key_matches(serving)


@pytest.mark.parametrize(
    ("user", "groups"),
    [
        pytest.param("admin", ["system:masters"], id="admin-in-system-masters"),
        pytest.param("dra-operator", [], id="operator-without-groups"),
        pytest.param("someone", ["a", "b"], id="several-groups"),
    ],
)
def test_client_cert_carries_user_and_groups(
    ca: CertifiedKey, user: str, groups: list[str]
) -> None:
    client = issue_client_cert(ca, user, groups)
    cert = client.certificate
    cert.verify_directly_issued_by(ca.certificate)
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == [user]
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    assert orgs == groups
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    assert _key_matches(client)


def test_service_account_key_pair_is_rsa() -> None:
    private_pem, public_pem = new_sa_key()
    private = serialization.load_pem_private_key(private_pem, password=None)
    assert isinstance(private, rsa.RSAPrivateKey)
    assert _public_bytes(private.public_key()) == public_pem
