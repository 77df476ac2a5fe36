#!/usr/bin/env python3
"""Big data in and out of a Kindling server, measured: the numbers issue 39 asks for.

import (the default): generates a document of --mb megabytes in export form
(scripts/generate-big-json.py), starts `kindling serve --in-memory`, imports it with
`kindling import` (steps of 1 MB), exports it back with `kindling export -o`, and checks the
export is byte for byte the file. Prints the peak resident size of the import, of the export
(both command-line processes) and of the server, and the times.

big-put: one PUT of 250 MB holding 2.48 million values under the server's defaults, while
small requests to other namespaces are timed (the hardening bound: each within 300 ms); then a
second giant PUT at the same time as a first, which must be refused (413 or 503), not parsed.

Run it on a release build, on an otherwise idle machine:
  swift build -c release --product kindling
  scripts/bigdata-bench.py import --mb 3072 --binary .build/release/kindling
  scripts/bigdata-bench.py big-put --binary .build/release/kindling
"""
import argparse
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class Server:
    def __init__(self, binary, extra=()):
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "serve", "--port", str(self.port), "--in-memory", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("the server did not start")

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def request(self, method, path, body=None, timeout=600):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        connection.request(method, path, body=body, headers={"Authorization": "Bearer owner"})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, data

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def timed(command):
    """Runs `command` under /usr/bin/time -v: (seconds, peak resident KB, exit status)."""
    started = time.time()
    run = subprocess.run(["/usr/bin/time", "-v", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    if run.returncode != 0:
        sys.stderr.write(run.stderr[-3000:])
    return time.time() - started, int(peak.group(1)) if peak else 0, run.returncode


def bench_import(arguments):
    folder = arguments.folder or tempfile.mkdtemp(prefix="kindling-bigdata-")
    source = os.path.join(folder, "big-%g.json" % arguments.mb)
    if not os.path.exists(source):
        print("generating %s (%g MB)" % (source, arguments.mb), flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "generate-big-json.py"), "--mb", str(arguments.mb), source], check=True)
    size = os.path.getsize(source)
    server = Server(arguments.binary)
    try:
        seconds, peak, status = timed([arguments.binary, "import", source, "--url", server.url, "--ns", "big"])
        print("import: %d bytes in %.1f s (%.1f MB/s), exit %d, peak resident %d MB (the command)" % (
            size, seconds, size / seconds / 2**20, status, peak // 1024))
        print("server after the import: peak resident %d MB" % (peak_kb(server.process.pid) // 1024))
        exported = os.path.join(folder, "export.json")
        seconds, peak, status = timed([arguments.binary, "export", "--url", server.url, "--ns", "big", "-o", exported])
        print("export: %.1f s, exit %d, peak resident %d MB (the command)" % (seconds, status, peak // 1024))
        same = subprocess.run(["cmp", "-s", source, exported]).returncode == 0
        print("export byte for byte the imported file: %s" % ("yes" if same else "NO"))
        print("server after the export: peak resident %d MB" % (peak_kb(server.process.pid) // 1024))
        return 0 if same and status == 0 else 1
    finally:
        server.stop()
        if not arguments.keep:
            for name in os.listdir(folder):
                if name.startswith("export.json"):
                    os.remove(os.path.join(folder, name))


def bench_big_put(arguments):
    folder = arguments.folder or tempfile.mkdtemp(prefix="kindling-bigput-")
    source = os.path.join(folder, "put-250mb.json")
    if not os.path.exists(source):
        subprocess.run([sys.executable, os.path.join(HERE, "generate-big-json.py"), "--values", "2480000", source], check=True)
    with open(source, "rb") as file:
        body = file.read()
    server = Server(arguments.binary)
    try:
        result = {}

        def put(name):
            started = time.time()
            try:
                result[name] = server.request("PUT", "/.json?ns=%s&print=silent" % name, body)[0], time.time() - started
            except OSError as error:
                result[name] = str(error), time.time() - started

        writer = threading.Thread(target=put, args=("big",))
        writer.start()
        latencies = []
        index = 0
        while writer.is_alive():
            started = time.time()
            status, _ = server.request("PUT", "/n.json?ns=small%d" % (index % 20), str(index).encode(), timeout=60)
            status2, _ = server.request("GET", "/n.json?ns=small%d" % (index % 20), timeout=60)
            latencies.append((time.time() - started) / 2)
            assert status == 200 and status2 == 200, (status, status2)
            index += 1
            time.sleep(0.05)
        writer.join()
        print("PUT of %d bytes: status %s in %.1f s; server peak resident %d MB" % (
            len(body), result["big"][0], result["big"][1], peak_kb(server.process.pid) // 1024))
        latencies.sort()
        if latencies:
            print("%d small requests to other namespaces meanwhile: median %.1f ms, max %.1f ms (bound 300 ms: %s)" % (
                len(latencies), 1000 * latencies[len(latencies) // 2], 1000 * latencies[-1],
                "held" if latencies[-1] <= 0.3 else "MISSED"))
        first = threading.Thread(target=put, args=("big-a",))
        second = threading.Thread(target=put, args=("big-b",))
        first.start()
        second.start()
        first.join()
        second.join()
        print("two at once: %s and %s (one must be refused with 413 or 503); server peak resident %d MB" % (
            result["big-a"][0], result["big-b"][0], peak_kb(server.process.pid) // 1024))
        statuses = {str(result["big-a"][0]), str(result["big-b"][0])}
        return 0 if result["big"][0] == 204 and "204" in statuses and statuses & {"413", "503"} else 1
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["import", "big-put"])
    parser.add_argument("--binary", default=".build/release/kindling", help="the kindling executable")
    parser.add_argument("--mb", type=float, default=3072, help="import: the size of the generated file")
    parser.add_argument("--folder", help="where to keep the generated files (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the exported file")
    arguments = parser.parse_args()
    sys.exit(bench_import(arguments) if arguments.mode == "import" else bench_big_put(arguments))


if __name__ == "__main__":
    main()
