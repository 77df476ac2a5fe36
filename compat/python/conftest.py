"""Starts `kindling serve` on a free port and points firebase-admin at it.

The binary comes from $KINDLING_BIN (default: .build/debug/kindling). firebase-admin enters
emulator mode through FIREBASE_DATABASE_EMULATOR_HOST, sends `Authorization: Bearer owner`, and
takes the namespace from the first label of the database URL (`kindling-test`).

With KINDLING_CLUSTER=1 the tests run against a follower node of a cluster on NATS JetStream
instead (see `_start_cluster`).
"""
import os
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "kindling-test"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """With pytest-xdist's `--dist loadgroup` (scripts/test-python.sh), each file's tests run in
    one process, so its module fixtures (a bundled SDK, a server) are made once; a test marked
    `alone`, which mostly waits, is a group of its own, run by whichever process is free first
    (xdist hands out the groups with the most tests first). Before xdist's own hook, which reads
    the groups."""
    for item in items:
        alone = item.get_closest_marker("alone") is not None
        item.add_marker(pytest.mark.xdist_group(item.module.__name__ + ("-alone" if alone else "")))


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port, process, what, seconds=30):
    deadline = time.time() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                process.kill()
                pytest.fail(f"{what} did not start: " + process.stderr.read().decode(errors="replace"))
            time.sleep(0.05)


def _stop(processes):
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _start_cluster(binary, directory):
    """KINDLING_CLUSTER=1: three NATS servers (a JetStream cluster on loopback) and two
    `kindling serve --cluster` nodes. Node 1 writes to the test namespace first, so it leads it;
    the tests talk to node 2, a follower, whose writes go to the leader and whose reads, queries
    and streams come from the log it follows. Returns node 2's address and every process."""
    client_ports = [_free_port() for _ in range(3)]
    route_ports = [_free_port() for _ in range(3)]
    routes = ",".join(f"nats://127.0.0.1:{port}" for port in route_ports)
    processes = []
    for index in range(3):
        nats = subprocess.Popen(
            ["nats-server", "-js", "-sd", str(directory / f"nats{index}"), "-p", str(client_ports[index]), "-n", f"n{index}",
             "--cluster_name", "kindling-python", "--cluster", f"nats://127.0.0.1:{route_ports[index]}", "--routes", routes],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        processes.append(nats)
        _wait_for_port(client_ports[index], nats, "nats-server")
    urls = ",".join(f"nats://127.0.0.1:{port}" for port in client_ports)
    ports = []
    for node in (1, 2):
        port = _free_port()
        kindling = subprocess.Popen(
            [binary, "serve", "--port", str(port), "--cluster", urls, "--node-id", f"python{node}", "--lease-seconds", "2",
             "--keep-alive", "0.5", "--log-level", "warning"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        processes.append(kindling)
        _wait_for_port(port, kindling, f"kindling serve --cluster (node {node})", seconds=60)
        ports.append(port)
    request = urllib.request.Request(
        f"http://127.0.0.1:{ports[0]}/leader.json?ns={NAMESPACE}", data=b'"python1"', method="PUT",
        headers={"Authorization": "Bearer owner"},
    )
    urllib.request.urlopen(request, timeout=30).read()
    return f"127.0.0.1:{ports[1]}", processes


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    binary = os.environ.get("KINDLING_BIN", str(ROOT / ".build" / "debug" / "kindling"))
    if not Path(binary).exists():
        pytest.fail(f"kindling binary not found at {binary}; build it or set KINDLING_BIN")
    if os.environ.get("KINDLING_CLUSTER") == "1":
        address, processes = _start_cluster(binary, tmp_path_factory.mktemp("cluster"))
        yield address
        _stop(list(reversed(processes)))
        return
    port = _free_port()
    # A data directory of its own: not ./kindling-data in the working directory, which a second
    # pytest-xdist worker's server (or a developer's) would find locked.
    data = tmp_path_factory.mktemp("data")
    process = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--data-dir", str(data), "--keep-alive", "0.5", "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _wait_for_port(port, process, "kindling serve")
    yield f"127.0.0.1:{port}"
    _stop([process])


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
