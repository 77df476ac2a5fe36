#!/usr/bin/env python3
"""Big data in and out of a Kindling server, measured: the numbers issue 39 asks for.

import (the default): generates a document of --mb megabytes in export form
(scripts/generate-big-json.py, canonical: what an export of it must give back), starts
`kindling serve --in-memory`, imports it with `kindling import` (steps of 1 MB), exports it
back with `kindling export -o`, and compares the export with the file byte for byte (the first
differing byte is named). Prints, for the import and the export, the time, MB/s and peak
resident size of the command (its rusage) with its resident size at each quarter of the run,
and the server's resident size before, its peak
and its size after each (the server holds the whole tree in memory, so that part grows with the
data; the commands' must not).

big-put: one PUT of 250 MB holding 2.48 million values under the server's defaults, while
small requests to other namespaces are timed one by one, each within the hardening bound of
300 ms: over REST (a PUT then a GET on a new connection each) and over WebSocket (a listen,
then a put and a get on one connection per namespace). Then a second giant PUT at the same time
as a first, which must be refused (413 or 503), not parsed, with the same small requests timed.
Prints the count, median, p99 and max of each kind, and the server's peak resident size.

Each run prints the load average (/proc/loadavg) when it starts and ends. Run it on a release
build, on a machine as idle as can be:
  swift build -c release --product kindling
  scripts/bigdata-bench.py import --mb 3072 --binary .build/release/kindling
  scripts/bigdata-bench.py big-put --binary .build/release/kindling
Exit status 0 when every check held, 1 otherwise.
"""
import argparse
import base64
import http.client
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOUND = 0.3  # seconds: the hardening bound for a small request while a big one is served


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def status_kb(pid, field):
    """A size from /proc/PID/status in KB: VmHWM (the peak resident size) or VmRSS (now)."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def loadavg():
    with open("/proc/loadavg") as file:
        return " ".join(file.read().split()[:3])


def mb(kb):
    return kb // 1024


class Server:
    def __init__(self, binary, extra=()):
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "serve", "--port", str(self.port), "--in-memory", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)  # polls for the listening socket; the server gives no other sign
        raise SystemExit("the server did not start")

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def kb(self, field):
        return status_kb(self.process.pid, field)

    def request(self, method, path, body=None, timeout=600):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers={"Authorization": "Bearer owner"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)


def timed(command):
    """Runs `command`: (seconds, peak resident KB from the kernel's rusage, exit status, its
    resident size sampled twice a second as [(seconds since the start, KB)])."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    samples = []
    done = threading.Event()

    def sample():
        while not done.wait(0.5):
            try:
                samples.append((time.monotonic() - started, status_kb(process.pid, "VmRSS")))
            except OSError:
                return

    sampler = threading.Thread(target=sample)
    sampler.start()
    errors = threading.Thread(target=lambda: setattr(process, "errors", process.stderr.read()))
    errors.start()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    done.set()
    sampler.join()
    errors.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.stderr.write(process.errors.decode(errors="replace")[-3000:])
    return seconds, usage.ru_maxrss, process.returncode, samples


def trend(samples):
    """The resident size at each quarter of a run, from its samples: whether it grows with the data."""
    if not samples:
        return "too short to sample"
    last = samples[-1][0]
    quarters = [min(samples, key=lambda sample: abs(sample[0] - last * quarter / 4)) for quarter in (1, 2, 3, 4)]
    return "resident at 1/4, 1/2, 3/4 and the end of the run: %s MB" % ", ".join("%d" % mb(kb) for _, kb in quarters)


def first_difference(one, other):
    """None when the two files are byte for byte the same, else what `cmp` says of the first difference."""
    run = subprocess.run(["cmp", one, other], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return None if run.returncode == 0 else run.stdout.strip()


def bench_import(arguments):
    made_folder = arguments.folder is None
    folder = arguments.folder or tempfile.mkdtemp(prefix="kindling-bigdata-")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, "big-%g.json" % arguments.mb)
    exported = os.path.join(folder, "export.json")
    if not os.path.exists(source):
        print("generating %s (%g MB)" % (source, arguments.mb), flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "generate-big-json.py"), "--mb", str(arguments.mb), source], check=True)
    size = os.path.getsize(source)
    print("load average at the start: %s" % loadavg(), flush=True)
    server = Server(arguments.binary)
    try:
        before = server.kb("VmRSS")
        seconds, peak, status, samples = timed([arguments.binary, "import", source, "--url", server.url, "--ns", "big"])
        print("import: %d bytes in %.1f s (%.1f MB/s), exit %d; the command's peak resident %d MB, %s" % (
            size, seconds, size / seconds / 2**20, status, mb(peak), trend(samples)), flush=True)
        print("server: resident %d MB before, %d MB after, peak %d MB" % (
            mb(before), mb(server.kb("VmRSS")), mb(server.kb("VmHWM"))), flush=True)
        if status != 0:
            return 1
        seconds, peak, status, samples = timed([arguments.binary, "export", "--url", server.url, "--ns", "big", "-o", exported])
        exported_size = os.path.getsize(exported) if os.path.exists(exported) else 0
        print("export: %d bytes in %.1f s (%.1f MB/s), exit %d; the command's peak resident %d MB, %s" % (
            exported_size, seconds, exported_size / seconds / 2**20, status, mb(peak), trend(samples)), flush=True)
        print("server: resident %d MB after the export, peak %d MB" % (mb(server.kb("VmRSS")), mb(server.kb("VmHWM"))))
        difference = first_difference(source, exported) if status == 0 else "no export"
        print("export byte for byte the file (its canonical export form): %s" % ("yes" if difference is None else "NO: " + difference))
        print("load average at the end: %s" % loadavg())
        return 0 if difference is None else 1
    finally:
        server.stop()
        if not arguments.keep:
            for name in os.listdir(folder):
                if name.startswith("export.json"):
                    os.remove(os.path.join(folder, name))
            if made_folder:
                shutil.rmtree(folder)


class WebSocket:
    """A minimal realtime client (RFC 6455 framing, protocol v5 messages): written here so the
    script needs nothing beyond Python's standard library."""

    def __init__(self, port, namespace, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.request_id = 0
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            "GET /.ws?v=5&ns=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (namespace, port, key)).encode())
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise OSError("no WebSocket upgrade: %r" % head[:200])
        handshake = self._message()
        if handshake.get("t") != "c":
            raise OSError("no handshake: %r" % handshake)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise OSError("the server closed the WebSocket")
        self.buffer += data

    def _take(self, count):
        while len(self.buffer) < count:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _frame(self):
        """The next data frame's payload (a ping is answered, a close raises)."""
        while True:
            first, second = self._take(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._take(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._take(8))[0]
            payload = self._take(length)
            opcode = first & 0x0F
            if opcode == 8:
                raise OSError("the server closed the WebSocket")
            if opcode == 9:
                self._send(payload, opcode=10)
            elif opcode in (0, 1, 2):
                return payload, bool(first & 0x80)

    def _message(self):
        """The next protocol message: one text message, or as many as a leading count says."""
        text = self._text()
        if text.isdigit():
            text = "".join(self._text() for _ in range(int(text)))
        return json.loads(text)

    def _text(self):
        payload, final = self._frame()
        while not final:
            more, final = self._frame()
            payload += more
        return payload.decode()

    def _send(self, payload, opcode=1):
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        self.sock.sendall(header + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload)))

    def request(self, action, body):
        """Sends one request and reads until its response; its status (`ok`, or another)."""
        self.request_id += 1
        self._send(json.dumps({"t": "d", "d": {"r": self.request_id, "a": action, "b": body}}, separators=(",", ":")).encode())
        while True:
            message = self._message()
            data = message.get("d", {})
            if message.get("t") == "d" and data.get("r") == self.request_id:
                return data["b"]["s"]

    def close(self):
        self.sock.close()


class Probes:
    """Small requests to other namespaces, each timed on its own, while a big request is served.

    One thread per transport sends them one after another, 20 ms apart: REST, a PUT then a GET
    (`/n.json?ns=smallN`), each on a new connection; WebSocket, a put and a get of `/n` on one
    connection per namespace (`wsN`) that listens there too. A request that fails or takes 60 s
    is recorded as a failure."""

    def __init__(self, server, namespaces=4):
        self.server = server
        self.namespaces = namespaces
        self.samples = []  # (transport, started, seconds or None for a failure, note)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.counts = {"rest": threading.Semaphore(0), "websocket": threading.Semaphore(0)}
        self.threads = [threading.Thread(target=self._rest), threading.Thread(target=self._websocket)]

    def start(self):
        for thread in self.threads:
            thread.start()
        for count in self.counts.values():  # both transports answered before the big request starts
            if not count.acquire(timeout=120):
                raise SystemExit("the small requests got no answer")

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            if thread.ident is not None:
                thread.join()

    def _record(self, transport, started, seconds, note=""):
        with self.lock:
            self.samples.append((transport, started, seconds, note))
        self.counts[transport].release()

    def _timed(self, transport, action):
        started = time.monotonic()
        try:
            outcome = action()
        except (OSError, http.client.HTTPException) as error:
            self._record(transport, started, None, str(error))
            return False
        self._record(transport, started, time.monotonic() - started, "" if outcome is True else str(outcome))
        return outcome is True

    def _rest(self):
        index = 0
        while not self.stopping.is_set():
            namespace = "small%d" % (index % self.namespaces)
            path = "/n.json?ns=%s" % namespace
            self._timed("rest", lambda: self.server.request("PUT", path, str(index).encode(), timeout=60)[0] == 200 or "PUT failed")
            self._timed("rest", lambda: self.server.request("GET", path, timeout=60)[0] == 200 or "GET failed")
            index += 1
            self.stopping.wait(0.02)

    def _websocket(self):
        sockets = []
        try:
            for number in range(self.namespaces):
                websocket = WebSocket(self.server.port, "ws%d" % number, timeout=60)
                sockets.append(websocket)
                if websocket.request("q", {"p": "/n", "h": ""}) != "ok":
                    raise OSError("listen refused")
            index = 0
            while not self.stopping.is_set():
                websocket = sockets[index % len(sockets)]
                self._timed("websocket", lambda: websocket.request("p", {"p": "/n", "d": index}) == "ok" or "put refused")
                self._timed("websocket", lambda: websocket.request("g", {"p": "/n"}) == "ok" or "get refused")
                index += 1
                self.stopping.wait(0.02)
        except OSError as error:
            self._record("websocket", time.monotonic(), None, str(error))
        finally:
            for websocket in sockets:
                websocket.close()

    def report(self, started, ended):
        """Prints the requests that overlapped [started, ended]; whether each kept the bound."""
        held = True
        for transport in ("rest", "websocket"):
            with self.lock:
                during = [sample for sample in self.samples
                          if sample[0] == transport and sample[1] <= ended and (sample[2] is None or sample[1] + sample[2] >= started)]
            failed = [sample for sample in during if sample[2] is None or sample[3]]
            times = sorted(sample[2] for sample in during if sample[2] is not None)
            if not times:
                print("  %s: no small request overlapped it" % transport)
                held = False
                continue
            worst = max((sample for sample in during if sample[2] is not None), key=lambda sample: sample[2])
            over = sum(1 for value in times if value > BOUND)
            kept = over == 0 and not failed
            held = held and kept
            print("  %s: %d small requests, median %.1f ms, p99 %.1f ms, max %.1f ms (%.1f s into it), %d over %d ms, %d failed: %s" % (
                transport, len(times), 1000 * times[len(times) // 2], 1000 * times[max(0, math.ceil(0.99 * len(times)) - 1)],
                1000 * worst[2], worst[1] - started, over, 1000 * BOUND, len(failed), "held" if kept else "MISSED"))
            for sample in failed[:5]:
                print("    failed %.1f s into it: %s" % (sample[1] - started, sample[3]))
        return held


def bench_big_put(arguments):
    made_folder = arguments.folder is None
    folder = arguments.folder or tempfile.mkdtemp(prefix="kindling-bigput-")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, "put-%d-values.json" % arguments.values)
    if not os.path.exists(source):
        subprocess.run([sys.executable, os.path.join(HERE, "generate-big-json.py"), "--values", str(arguments.values), source], check=True)
    with open(source, "rb") as file:
        body = file.read()
    if made_folder:
        shutil.rmtree(folder)
    print("load average at the start: %s" % loadavg(), flush=True)
    server = Server(arguments.binary)
    probes = Probes(server)
    try:
        result = {}

        def put(name):
            started = time.monotonic()
            try:
                status = server.request("PUT", "/.json?ns=%s&print=silent" % name, body)[0]
            except (OSError, http.client.HTTPException) as error:
                status = str(error)
            result[name] = status, started, time.monotonic()

        probes.start()
        before = server.kb("VmHWM")
        put("big")
        status, started, ended = result["big"]
        print("PUT of %d bytes: status %s in %.1f s; server peak resident %d MB, %d MB over its peak before" % (
            len(body), status, ended - started, mb(server.kb("VmHWM")), mb(server.kb("VmHWM") - before)), flush=True)
        held = probes.report(started, ended)

        first = threading.Thread(target=put, args=("big-a",))
        second = threading.Thread(target=put, args=("big-b",))
        first.start()
        second.start()
        first.join()
        second.join()
        started = min(result["big-a"][1], result["big-b"][1])
        ended = max(result["big-a"][2], result["big-b"][2])
        print("two at once: %s in %.1f s and %s in %.1f s (one must be refused with 413 or 503); server peak resident %d MB" % (
            result["big-a"][0], result["big-a"][2] - result["big-a"][1], result["big-b"][0], result["big-b"][2] - result["big-b"][1],
            mb(server.kb("VmHWM"))), flush=True)
        held = probes.report(started, ended) and held
        probes.stop()
        print("load average at the end: %s" % loadavg())
        statuses = {str(result["big-a"][0]), str(result["big-b"][0])}
        return 0 if status == 204 and "204" in statuses and statuses & {"413", "503"} and held else 1
    finally:
        probes.stop()
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["import", "big-put"])
    parser.add_argument("--binary", default=".build/release/kindling", help="the kindling executable")
    parser.add_argument("--mb", type=float, default=3072, help="import: the size of the generated file")
    parser.add_argument("--values", type=int, default=2480000, help="big-put: the values the PUT holds (2.48 million: 250 MB)")
    parser.add_argument("--folder", help="where to keep the generated files for the next run (default: a temporary folder, removed)")
    parser.add_argument("--keep", action="store_true", help="import: keep the exported file")
    arguments = parser.parse_args()
    sys.exit(bench_import(arguments) if arguments.mode == "import" else bench_big_put(arguments))


if __name__ == "__main__":
    main()
