"""Throw-away certificate authorities and their certificates, as PEM bytes (no files, no sockets).

For whatever serves HTTPS on a developer's machine or in tests: the local cluster's `--tls` mode, the
operator's admission webhook server, the real API server of the test backend. A server certificate
carries SANs (DNS localhost, IP 127.0.0.1, and the given hosts and addresses): Go-built clients such
as kubectl and kube-apiserver reject CN-only certificates. Client certificates carry the user name as
CN and the groups as O, as Kubernetes reads them. Keys are EC P-256. Needs `cryptography`, imported
only when a certificate is made.
"""
import dataclasses
import datetime
import ipaddress
from typing import Any

VALIDITY = datetime.timedelta(days=365)


@dataclasses.dataclass(frozen=True)
class Certificates:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    ca_key_pem: bytes = b''

    def client(self, user: str, groups: tuple[str, ...] = ('system:masters',)) -> tuple[bytes, bytes]:
        """A client certificate and key (PEM) signed by this CA: CN = user, O = groups."""
        from cryptography import x509  # optional: `cryptography`
        from cryptography.hazmat.primitives import serialization
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        ca_key = serialization.load_pem_private_key(self.ca_key_pem, password=None)
        ca = x509.load_pem_x509_certificate(self.ca_pem)
        names = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        subject = x509.Name([*names, x509.NameAttribute(NameOID.COMMON_NAME, user)])
        key, builder = _leaf(subject, ca.subject)
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        return _pem(_sign(builder, ca_key)), _key_pem(key)


def make(host: str = '127.0.0.1', *extra_sans: str) -> Certificates:
    """A new CA and a server certificate for localhost, 127.0.0.1, `host` and the extra names/addresses."""
    from cryptography import x509  # optional: `cryptography`
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_key, ca = _authority()
    names: list[x509.GeneralName] = [x509.DNSName('localhost'), x509.IPAddress(ipaddress.ip_address('127.0.0.1'))]
    for name in (host, *extra_sans):
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            general: x509.GeneralName = x509.DNSName(name)
        else:
            general = x509.IPAddress(address)
        if general not in names:
            names.append(general)
    key, builder = _leaf(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'kopf-local')]), ca.subject)
    builder = (builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
    return Certificates(ca_pem=_pem(ca), cert_pem=_pem(_sign(builder, ca_key)), key_pem=_key_pem(key),
                        ca_key_pem=_key_pem(ca_key))


def _authority() -> tuple[Any, Any]:
    from cryptography import x509  # optional: `cryptography`
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'kopf-local-ca')])
    usage = x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                          key_encipherment=False, data_encipherment=False, key_agreement=False,
                          encipher_only=False, decipher_only=False)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(usage, critical=True))
    return key, _sign(builder, key)


def _leaf(subject: Any, issuer: Any) -> tuple[Any, Any]:
    from cryptography import x509  # optional: `cryptography`
    from cryptography.hazmat.primitives.asymmetric import ec

    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY))
    return key, builder


def _sign(builder: Any, key: Any) -> Any:
    from cryptography.hazmat.primitives import hashes  # optional: `cryptography`
    return builder.sign(key, hashes.SHA256())


def _pem(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization  # optional: `cryptography`
    return bytes(cert.public_bytes(serialization.Encoding.PEM))


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization  # optional: `cryptography`
    return bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
