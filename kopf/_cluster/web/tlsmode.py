"""HTTPS mode: the server's TLS context from a throw-away CA's certificates (`kopf._shared.certificates`).

The certificates themselves (a CA, the server's certificate with SANs for localhost, 127.0.0.1 and
the advertised host, and client certificates) are made by `kopf._shared.certificates`; here they
become an `ssl.SSLContext`, verifying client certificates against the same CA if asked.
"""
import ssl
import tempfile

from kopf._shared import certificates

Certificates = certificates.Certificates
make = certificates.make


def server_context(certs: Certificates, verify_clients: bool = False) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.NamedTemporaryFile() as cert, tempfile.NamedTemporaryFile() as key:
        cert.write(certs.cert_pem)
        key.write(certs.key_pem)
        cert.flush()
        key.flush()
        context.load_cert_chain(cert.name, key.name)
    if verify_clients:
        context.verify_mode = ssl.CERT_OPTIONAL
        context.load_verify_locations(cadata=certs.ca_pem.decode())
    return context
