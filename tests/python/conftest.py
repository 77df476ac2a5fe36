"""Starts `kindling serve` on a free port and points firebase-admin at it.

The binary comes from $KINDLING_BIN (default: .build/debug/kindling). firebase-admin enters
emulator mode through FIREBASE_DATABASE_EMULATOR_HOST, sends `Authorization: Bearer owner`, and
takes the namespace from the first label of the database URL (`kindling-test`).
"""
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "kindling-test"


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def server():
    binary = os.environ.get("KINDLING_BIN", str(ROOT / ".build" / "debug" / "kindling"))
    if not Path(binary).exists():
        pytest.fail(f"kindling binary not found at {binary}; build it or set KINDLING_BIN")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--keep-alive", "0.5", "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                process.kill()
                pytest.fail("kindling serve did not start: " + process.stderr.read().decode(errors="replace"))
            time.sleep(0.05)
    yield f"127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="session")
def app(server):
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = server
    import firebase_admin
    from firebase_admin import credentials

    class _Anonymous(credentials.Base):
        """No Google credential is needed: in emulator mode firebase-admin uses `owner`."""

        def get_credential(self):
            return None

    instance = firebase_admin.initialize_app(
        _Anonymous(),
        {"databaseURL": f"https://{NAMESPACE}.firebaseio.com", "projectId": "kindling-test"},
        name="kindling-tests",
    )
    yield instance
    firebase_admin.delete_app(instance)


@pytest.fixture
def ref(app):
    """A fresh location per test, so tests never see each other's data."""
    from firebase_admin import db

    return db.reference(f"tests/{uuid.uuid4().hex}", app=app)
