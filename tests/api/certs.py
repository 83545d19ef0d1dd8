"""Minting a throw-away CA and certificates for the TLS tests (the `cryptography` package)."""
import dataclasses
import datetime
import ipaddress
import pathlib
import ssl
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclasses.dataclass(frozen=True)
class Pair:
    cert_pem: bytes
    key_pem: bytes


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_ca() -> tuple[Pair, ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'kopf test CA')])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return Pair(cert.public_bytes(serialization.Encoding.PEM), _pem(key)), key, cert


def issue(ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate, cn: str, *, server: bool) -> Pair:
    key = _key()
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
               .issuer_name(ca_cert.subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1)))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName([
            x509.DNSName('localhost'), x509.IPAddress(ipaddress.ip_address('127.0.0.1'))]), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return Pair(cert.public_bytes(serialization.Encoding.PEM), _pem(key))


def tls_contexts() -> tuple[ssl.SSLContext, ssl.SSLContext, Pair]:
    """A server context for `localhost` (and 127.0.0.1), a client context trusting its CA, and that CA."""
    ca, ca_key, ca_cert = make_ca()
    pair = issue(ca_key, ca_cert, 'localhost', server=True)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / 'c.pem').write_bytes(pair.cert_pem)
        (pathlib.Path(tmp) / 'k.pem').write_bytes(pair.key_pem)
        server_ctx.load_cert_chain(pathlib.Path(tmp) / 'c.pem', pathlib.Path(tmp) / 'k.pem')
    return server_ctx, ssl.create_default_context(cadata=ca.cert_pem.decode()), ca
