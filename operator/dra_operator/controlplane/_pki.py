"""Certificates and keys for the local control plane, made with `cryptography`.

One throw-away CA signs the apiserver's serving certificate and every client certificate;
kube-apiserver trusts the CA for client-certificate authentication, which maps the subject's
CN to the user name and each O to a group (`system:masters` makes the admin). Keys are ECDSA
P-256: quick to make and accepted by Go and Python TLS alike. The service-account signing key
is RSA, the one kind every apiserver release accepts.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import ipaddress
from collections.abc import Iterable
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "CertifiedKey",
    "issue_client_cert",
    "issue_serving_cert",
    "new_ca",
    "new_sa_key",
    "write_kubeconfig",
]

_VALIDITY = datetime.timedelta(days=365)
_CLOCK_SKEW = datetime.timedelta(hours=1)


@dataclasses.dataclass(frozen=True, slots=True)
class CertifiedKey:
    """A PEM certificate and the PEM private key it certifies."""

    cert_pem: bytes
    key_pem: bytes

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _CLOCK_SKEW)
        .not_valid_after(now + _VALIDITY)
    )


def new_ca(common_name: str = "dra-operator-local-ca") -> CertifiedKey:
    """A self-signed CA certificate, allowed to sign leaf certificates only."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        _builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertifiedKey(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _issue(
    ca: CertifiedKey,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    sans: list[x509.GeneralName],
) -> CertifiedKey:
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise TypeError("the CA key must be an ECDSA key")
    ca_cert = ca.certificate
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _builder(subject, ca_cert.subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return CertifiedKey(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue_serving_cert(
    ca: CertifiedKey,
    *,
    dns_names: Iterable[str] = ("localhost",),
    ip_addresses: Iterable[str] = ("127.0.0.1",),
) -> CertifiedKey:
    """A TLS server certificate for the apiserver, valid for the given names and addresses."""
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(a)) for a in ip_addresses]
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    return _issue(ca, subject, ExtendedKeyUsageOID.SERVER_AUTH, sans)


def issue_client_cert(ca: CertifiedKey, user: str, groups: Iterable[str] = ()) -> CertifiedKey:
    """A client certificate the apiserver reads as `user` in `groups` (CN and O)."""
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
    return _issue(ca, x509.Name(attrs), ExtendedKeyUsageOID.CLIENT_AUTH, [])


def new_sa_key() -> tuple[bytes, bytes]:
    """A service-account token signing key: (private PEM, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _key_pem(key), public


def write_kubeconfig(
    path: Path, server: str, ca: CertifiedKey, client: CertifiedKey, user: str
) -> None:
    """A kubeconfig (mode 0600) that authenticates as `client` to `server`, trusting `ca`."""

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "dra-operator-local",
                "cluster": {"server": server, "certificate-authority-data": b64(ca.cert_pem)},
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": b64(client.cert_pem),
                    "client-key-data": b64(client.key_pem),
                },
            }
        ],
        "contexts": [{"name": user, "context": {"cluster": "dra-operator-local", "user": user}}],
        "current-context": user,
    }
    path.touch(mode=0o600)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
