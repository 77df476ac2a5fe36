"""firebase-admin over https:// against `kindling serve --tls-cert --tls-key`.

The CA and the server certificates are made here with `cryptography`; requests trusts the CA
through REQUESTS_CA_BUNDLE. firebase-admin 7.7 takes an https:// databaseURL that is not the
emulator's as a production database and talks to `https://<netloc>` with the app's credential,
without FIREBASE_DATABASE_EMULATOR_HOST; it drops the URL's `?ns=` in that mode, so the server's
`--namespace` names the database, and the admin secret is the credential (a Bearer token).
"""
import datetime
import ipaddress
import os
import signal
import socket
import ssl
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import _free_port, ROOT

ADMIN_SECRET = "tls-admin-secret"
TLS_NAMESPACE = "tls-test"


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _make_ca():
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name("Kindling Python Test CA"))
        .issuer_name(_name("Kindling Python Test CA"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return key, certificate


def _issue(ca_key, ca_certificate, serial, common_name):
    """A server certificate for 127.0.0.1 and localhost, and its key as an EC (SEC1) PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_certificate.subject)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


@pytest.fixture
def tls_server(tmp_path):
    """`kindling serve` with TLS and an admin secret (so no emulator mode) on a free port."""
    binary = os.environ.get("KINDLING_BIN", str(ROOT / ".build" / "debug" / "kindling"))
    if not Path(binary).exists():
        pytest.fail(f"kindling binary not found at {binary}; build it or set KINDLING_BIN")
    ca_key, ca_certificate = _make_ca()
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca_certificate.public_bytes(serialization.Encoding.PEM))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    certificate, key = _issue(ca_key, ca_certificate, 0x1111, "first")
    cert_file.write_bytes(certificate)
    key_file.write_bytes(key)
    port = _free_port()
    process = subprocess.Popen(
        [
            binary, "serve", "--port", str(port), "--in-memory", "--log-level", "warning",
            "--namespace", TLS_NAMESPACE, "--admin-secret", ADMIN_SECRET,
            "--tls-cert", str(cert_file), "--tls-key", str(key_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    banner = process.stdout.readline().decode()
    if "listening" not in banner:
        process.kill()
        pytest.fail("kindling serve did not start: " + banner + process.stderr.read().decode(errors="replace"))

    def reissue(serial, common_name):
        new_certificate, new_key = _issue(ca_key, ca_certificate, serial, common_name)
        cert_file.write_bytes(new_certificate)
        key_file.write_bytes(new_key)

    yield {"port": port, "ca": str(ca_file), "process": process, "reissue": reissue}
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _peer_serial(port, ca_file):
    """The serial of the certificate a new TLS handshake with the server presents."""
    context = ssl.create_default_context(cafile=ca_file)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True)).serial_number


def test_firebase_admin_over_https(tls_server, monkeypatch):
    import firebase_admin
    from firebase_admin import credentials, db
    from google.auth import credentials as google_credentials

    class _Secret(google_credentials.Credentials):
        """The admin secret as a Bearer token, as a Google access token would be sent."""

        def __init__(self):
            super().__init__()
            self.token = ADMIN_SECRET
            self.expiry = None

        def refresh(self, request):
            self.token = ADMIN_SECRET

    class _AdminSecret(credentials.Base):
        def get_credential(self):
            return _Secret()

    # The session fixture of the other tests may have set the emulator variable: not here.
    monkeypatch.delenv("FIREBASE_DATABASE_EMULATOR_HOST", raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", tls_server["ca"])
    url = f"https://127.0.0.1:{tls_server['port']}?ns={TLS_NAMESPACE}"
    app = firebase_admin.initialize_app(_AdminSecret(), {"databaseURL": url}, name=f"tls-{uuid.uuid4().hex}")
    try:
        ref = db.reference(f"tls/{uuid.uuid4().hex}", app=app)
        ref.set({"name": "lamp", "n": 1})
        assert ref.get() == {"name": "lamp", "n": 1}
        ref.update({"n": 2})
        assert ref.child("n").get() == 2
        pushed = ref.child("list").push("x")
        assert ref.child("list").child(pushed.key).get() == "x"
        # It landed in the server's namespace, over TLS.
        import requests

        stored = requests.get(
            f"https://127.0.0.1:{tls_server['port']}{ref.path}.json",
            params={"ns": TLS_NAMESPACE, "auth": ADMIN_SECRET}, verify=tls_server["ca"], timeout=5,
        )
        assert stored.json()["name"] == "lamp"
    finally:
        firebase_admin.delete_app(app)
    # The CA is what makes the certificate trusted: with only the public roots it is refused
    # (checked with requests directly: firebase-admin's retries would back off for minutes).
    import certifi

    with pytest.raises(requests.exceptions.SSLError):
        requests.get(f"https://127.0.0.1:{tls_server['port']}/.json", verify=certifi.where(), timeout=5)


def test_sighup_swaps_the_certificate_for_new_connections(tls_server):
    port, ca = tls_server["port"], tls_server["ca"]
    assert _peer_serial(port, ca) == 0x1111
    tls_server["reissue"](0x2222, "second")
    tls_server["process"].send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while _peer_serial(port, ca) != 0x2222:
        assert time.time() < deadline, "the new certificate was not served after SIGHUP"
        time.sleep(0.05)
    assert tls_server["process"].poll() is None


def test_a_plain_http_request_on_the_tls_port_gets_a_400(tls_server):
    with socket.create_connection(("127.0.0.1", tls_server["port"]), timeout=5) as raw:
        raw.sendall(b"GET /.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while chunk := raw.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b"https://" in answer
