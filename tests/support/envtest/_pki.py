"""Per-run key material: a CA, the API server's serving certificate, an admin client certificate and the
service-account token signing key. ECDSA P-256 throughout: generating it takes microseconds (RSA takes
tens of milliseconds a key), and the API server, Go's TLS, OpenSSL and the ``kubernetes`` client accept it.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=2)
SERVING_DNS = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
SERVING_IPS = ("127.0.0.1", "10.0.0.1")  # loopback, and the first address of --service-cluster-ip-range


@dataclass(frozen=True)
class Pki:
    """Paths of the PEM files written for one run."""

    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    sa_key: Path  # private key: --service-account-signing-key-file
    sa_public: Path  # public key: --service-account-key-file

    def issue_client(self, directory: Path, name: str, user: str, groups: tuple[str, ...] = ()) -> tuple[Path, Path]:
        """A client certificate for ``user`` in ``groups`` (CN and O, as the API server reads them)."""
        ca_key = serialization.load_pem_private_key(self.ca_key.read_bytes(), password=None)
        ca_cert = x509.load_pem_x509_certificate(self.ca_cert.read_bytes())
        key = _key()
        subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        subject.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        cert = _issue(ca_cert.subject, ca_key, x509.Name(subject), key, usage=[ExtendedKeyUsageOID.CLIENT_AUTH])
        return _write(directory / f"{name}.crt", cert), _write_key(directory / f"{name}.key", key)


def generate(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = _key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kai-gitops-envtest-ca")])
    ca_cert = (
        _builder(ca_name, ca_name, ca_key, ca=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    serving_key = _key()
    sans = [x509.DNSName(name) for name in SERVING_DNS] + [
        x509.IPAddress(ipaddress.ip_address(ip)) for ip in SERVING_IPS
    ]
    serving = _issue(
        ca_name,
        ca_key,
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]),
        serving_key,
        usage=[ExtendedKeyUsageOID.SERVER_AUTH],
        sans=sans,
    )
    sa_key = _key()
    pki = Pki(
        ca_cert=_write(directory / "ca.crt", ca_cert),
        ca_key=_write_key(directory / "ca.key", ca_key),
        serving_cert=_write(directory / "apiserver.crt", serving),
        serving_key=_write_key(directory / "apiserver.key", serving_key),
        admin_cert=directory / "admin.crt",
        admin_key=directory / "admin.key",
        sa_key=_write_key(directory / "sa.key", sa_key),
        sa_public=directory / "sa.pub",
    )
    pki.sa_public.write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    pki.issue_client(directory, "admin", "kai-gitops-envtest-admin", ("system:masters",))
    return pki


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _issue(issuer: x509.Name, issuer_key, subject: x509.Name, key, *, usage, sans=None) -> x509.Certificate:
    builder = (
        _builder(subject, issuer, key, ca=False)
        .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _builder(subject: x509.Name, issuer: x509.Name, key, *, ca: bool) -> x509.CertificateBuilder:
    """What a CA and a leaf certificate share: names, key, serial, validity (5 minutes back for clock skew),
    basic constraints and key usage (a CA signs certificates and CRLs; a leaf only signs)."""
    now = _now()
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=ca,
                crl_sign=ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )


def _write(path: Path, cert: x509.Certificate) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def _write_key(path: Path, key) -> Path:
    path.touch(mode=0o600)
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return path
