"""The official Firebase JS SDK (modular API) in headless Chromium against `kindling serve`.

The SDK is never part of this repository: each run extracts packages/{app,database,util,
component,logger} from a Firebase JS SDK checkout and bundles them with Debian's `esbuild` into a
temporary folder. KINDLING_JS_SDK_SOURCE names the checkout: a git directory (bare or not;
`git archive HEAD` extracts it) or an extracted folder holding packages/; by default
/work/.mirror/firebase+firebase-js-sdk/repo when it exists. Without the source, `esbuild`,
`chromium` or `chromedriver` the module is skipped, saying which; with KINDLING_REQUIRE_BROWSER=1
that is a failure instead. `kindling` comes from KINDLING_BIN (default .build/debug/kindling),
as in conftest.py. scripts/test-browser.sh installs what is missing and runs this module.

The page is served from a second loopback origin (a Python http.server on another port), so the
database is cross-origin to it as for a real app, and scenario 5 serves it as http://evil.test:PORT
(Chromium maps the name to 127.0.0.1, but it is not a loopback name). Each test starts its own
server with a fresh data directory and its own browser.

Scenarios: 1 WebSocket only (two apps); 2 forceLongPolling() over /.lp (two apps, a page that
navigates away), 2b a long-polling page idle past the SDK's keep-alive and the server's idle
timeout; 3 the `firebase:previous_websocket_failure` flag: long polling first, then the upgrade to
WebSocket while data flows both ways; 4 the server killed (SIGKILL) and restarted under an open
page, 4b the same under a long-polling page; 5 a page on a non-loopback origin is refused unless
--cors-origin names it (long polling and WebSocket).

Every wait is bounded (WebDriverWait polling the page or the REST API); the few "nothing happens"
checks wait a fixed, bounded time for the event that must not come. A failing test prints the
SDK's own log (enableLogging), the browser console, the HTTP and WebSocket requests the page made
to the database with their answers (from Chromium's performance log) and the tail of the server's
log; with KINDLING_BROWSER_ARTIFACTS=DIR that report is also written to DIR/<test>.txt.
"""
import collections
import contextlib
import functools
import http.client
import http.server
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from selenium import webdriver  # requirements.txt installs it
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SDK = Path("/work/.mirror/firebase+firebase-js-sdk/repo")
SDK_PACKAGES = ("app", "database", "util", "component", "logger")
FOREIGN_HOST = "evil.test"  # resolves to 127.0.0.1 in our Chromium only (--host-resolver-rules)
REQUIRE = os.environ.get("KINDLING_REQUIRE_BROWSER") == "1"


def _unavailable(reason):
    if REQUIRE:
        pytest.fail(f"{reason} (KINDLING_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ----------------------------------------------------------------------------------------------
# The bundle: the SDK's TypeScript sources, our shims, esbuild.

# @firebase/app imports the npm package `idb` for its heartbeat storage in IndexedDB. npm is not
# reachable, so this stand-in of ours keeps the heartbeats in memory: openDB() answers a database
# whose only store is a Map. The database SDK never needs the heartbeats to persist.
IDB_SHIM = """\
// Kindling's in-memory stand-in for the npm package `idb` (only what @firebase/app uses).
export function openDB(name, version, { upgrade } = {}) {
  const stores = new Map();
  const db = {
    createObjectStore(storeName) { stores.set(storeName, new Map()); },
    transaction(storeName) {
      if (!stores.has(storeName)) stores.set(storeName, new Map());
      const map = stores.get(storeName);
      const store = {
        async get(key) { return map.get(key); },
        async put(value, key) { map.set(key, value); return key; },
        async delete(key) { map.delete(key); },
      };
      return { objectStore() { return store; }, done: Promise.resolve() };
    },
    close() {},
  };
  if (upgrade) upgrade(db, 0, version, undefined);
  return Promise.resolve(db);
}
export function deleteDB() { return Promise.resolve(); }
"""

# esbuild emits its own helpers, so nothing should import tslib; this empty module of ours is
# there in case a source file does, instead of failing the bundle on a package npm would bring.
TSLIB_SHIM = "// Kindling's empty stand-in for the npm package `tslib` (esbuild needs no helpers).\nexport {};\n"

# The SDK's packages extend ../../config/tsconfig.base.json (not extracted); these are the
# options that change the emitted code: class fields as TypeScript before ES2022 defines them.
TSCONFIG = json.dumps({"compilerOptions": {"target": "es2020", "useDefineForClassFields": False,
                                           "experimentalDecorators": True}})

ENTRY = """\
// Kindling's browser test entry: the modular API the harness page uses, on window.
import { initializeApp, deleteApp } from '@firebase/app';
import {
  getDatabase, ref, set, get, update, push, remove, onValue, off, runTransaction, onDisconnect,
  goOffline, goOnline, forceLongPolling, forceWebSockets, connectDatabaseEmulator, enableLogging,
  serverTimestamp, increment,
} from '@firebase/database';
// Instrumentation, not a change of behaviour: each realtime Connection the SDK starts is noted in
// window.__kindlingConnections, so the page can tell which transport it is on (the
// PersistentConnection keeps its Connection in a closure).
import { Connection } from '@SDK@/packages/database/src/realtime/Connection';
const start = Connection.prototype.start_;
Connection.prototype.start_ = function (...args) {
  const seen = (window.__kindlingConnections = window.__kindlingConnections || []);
  if (!seen.includes(this)) seen.push(this);
  return start.apply(this, args);
};
Object.assign(window, {
  initializeApp, deleteApp, getDatabase, ref, set, get, update, push, remove, onValue, off,
  runTransaction, onDisconnect, goOffline, goOnline, forceLongPolling, forceWebSockets,
  connectDatabaseEmulator, enableLogging, serverTimestamp, increment,
});
"""

# The page: the flag for scenario 3 is set (or cleared) before the SDK loads, as a browser that
# met a WebSocket failure on an earlier visit would have it.
INDEX_HTML = """\
<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Kindling browser SDK harness</title>
<script>
  const query = new URLSearchParams(location.search);
  if (query.get('wsfail') === '1') localStorage.setItem('firebase:previous_websocket_failure', 'true');
  else localStorage.removeItem('firebase:previous_websocket_failure');
</script>
<script src="sdk.js"></script>
<script src="harness.js"></script>
</head><body><p>Kindling browser SDK harness</p></body></html>
"""

# The page's side of the tests: opens apps, records events, and says which transport a
# connection uses (from the SDK's Connection object: its primary transport and the one being
# upgraded to).
HARNESS_JS = r"""
(function () {
  const H = (window.H = { logs: [], apps: {}, errors: [] });
  const stamp = () => new Date().toISOString().slice(11, 23);
  enableLogging((message) => {
    H.logs.push(stamp() + ' ' + message);
    console.log('[sdk] ' + message);
  });
  window.addEventListener('error', (e) => { H.errors.push(String(e.message)); });
  window.addEventListener('unhandledrejection', (e) => { H.errors.push('unhandled rejection: ' + String(e.reason)); });

  H.open = function (name, databaseURL, transport) {
    if (transport === 'lp') forceLongPolling();
    else if (transport === 'ws') forceWebSockets();
    const app = initializeApp({ databaseURL, projectId: 'kindling-test', apiKey: 'kindling-browser-test', appId: '1:1:web:kindling' }, name);
    const db = getDatabase(app);
    const state = (H.apps[name] = { app, db, connected: false, connectedChanges: [], events: {} });
    onValue(ref(db, '.info/connected'), (snap) => {
      state.connected = snap.val();
      state.connectedChanges.push([stamp(), snap.val()]);
    });
    return true;
  };
  const R = (name, path) => ref(H.apps[name].db, path);
  const kind = (conn) => {
    if (!conn) return null;
    const type = (conn.constructor && conn.constructor.name) || '';
    if (type.startsWith('WebSocketConnection') || 'mySock' in conn) return 'websocket';
    if (type.startsWith('BrowserPollConnection') || 'scriptTagHolder' in conn) return 'longpoll';
    return 'unknown:' + type;
  };
  // 'websocket' / 'longpoll' once settled, 'longpoll->websocket' during an upgrade, null when
  // the app has no live connection (its newest Connection is closed or not yet made).
  H.transport = function (name) {
    const state = H.apps[name];
    const persistent = state && state.db._repoInternal && state.db._repoInternal.persistentConnection_;
    if (!persistent) return null;
    const mine = (window.__kindlingConnections || []).filter((c) => String(c.id).startsWith(persistent.id + ':'));
    const realtime = mine[mine.length - 1];
    if (!realtime || realtime.state_ === 2 || !realtime.conn_) return null;
    if (realtime.secondaryConn_) return kind(realtime.conn_) + '->' + kind(realtime.secondaryConn_);
    return kind(realtime.conn_);
  };
  H.flag = () => localStorage.getItem('firebase:previous_websocket_failure');
  // Runs an SDK call for execute_async_script: `done` gets {ok, value} or {ok: false, error}.
  H.run = function (make, done) {
    Promise.resolve()
      .then(make)
      .then((value) => done({ ok: true, value: value === undefined ? null : value }),
            (e) => done({ ok: false, error: String((e && (e.stack || e.message)) || e) }));
  };
  H.set = (name, path, value) => set(R(name, path), value);
  H.update = (name, path, value) => update(R(name, path), value);
  H.get = (name, path) => get(R(name, path)).then((snap) => snap.val());
  H.listen = function (name, path) {
    const events = (H.apps[name].events[path] = []);
    onValue(R(name, path), (snap) => events.push(snap.val()), (e) => events.push({ listenError: String(e) }));
    return true;
  };
  H.events = (name, path) => H.apps[name].events[path] || [];
  H.increment = (name, path) =>
    runTransaction(R(name, path), (value) => (value || 0) + 1).then((r) => ({ committed: r.committed, value: r.snapshot.val() }));
  H.onDisconnectSet = (name, path, value) => onDisconnect(R(name, path)).set(value);
  H.offline = (name) => { goOffline(H.apps[name].db); return true; };
  H.online = (name) => { goOnline(H.apps[name].db); return true; };
  // Writes {last: n, items/n: n} every `interval` ms from now (queued until connected), noting
  // the transport each write was issued on, until `after` writes were issued on a WebSocket or
  // `max` writes in all; when the upgrade starts (a WebSocket opened beside the long poll) it
  // issues `burst` writes at once, so that several are in flight while the carriers switch.
  H.writeLoop = function (name, path, interval, after, max, burst) {
    const loop = (H.apps[name].loop = { issued: 0, acked: 0, errors: [], transports: [], wsFrom: null, burstAt: null, done: false });
    let n = 0;
    const write = () => {
      const i = n++;
      update(R(name, path), { last: i, ['items/' + i]: i }).then(() => { loop.acked++; }, (e) => { loop.errors.push(i + ': ' + e); });
      loop.issued = n;
    };
    const tick = () => {
      const transport = H.transport(name);
      const last = loop.transports[loop.transports.length - 1];
      if (!last || last[1] !== transport) loop.transports.push([n, transport]);
      if (transport === 'websocket' && loop.wsFrom === null) loop.wsFrom = n;
      if (n >= max || (loop.wsFrom !== null && n >= loop.wsFrom + after)) { loop.done = true; return; }
      if (transport && transport.includes('->') && loop.burstAt === null) {
        loop.burstAt = n;
        for (let k = 0; k < burst; k++) write();
      }
      write();
      setTimeout(tick, interval);
    };
    tick();
    return true;
  };
  H.loop = (name) => { const l = H.apps[name].loop; return l && { issued: l.issued, acked: l.acked, errors: l.errors, transports: l.transports, wsFrom: l.wsFrom, burstAt: l.burstAt, done: l.done }; };
})();
"""


def _sdk_source():
    """The SDK checkout, or a skip naming what is missing."""
    configured = os.environ.get("KINDLING_JS_SDK_SOURCE")
    source = Path(configured) if configured else DEFAULT_SDK
    if not source.exists():
        _unavailable(f"Firebase JS SDK source not found at {source} (set KINDLING_JS_SDK_SOURCE to its git directory or an extracted folder)")
    return source


def _extract_sdk(source, target):
    """packages/{app,database,util,component,logger} and every package.json (@firebase/app imports
    other packages' names from theirs) into target/packages."""
    if (source / "packages" / "database" / "src").is_dir():
        for name in SDK_PACKAGES:
            shutil.copytree(source / "packages" / name, target / "packages" / name,
                            ignore=shutil.ignore_patterns("node_modules", "dist", "test"))
        for manifest in (source / "packages").glob("*/package.json"):
            destination = target / "packages" / manifest.parent.name / "package.json"
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(manifest, destination)
        return
    if not shutil.which("git"):
        _unavailable("git is needed to extract the Firebase JS SDK source from its git directory")
    archive = subprocess.run(
        ["git", "--git-dir", str(source / ".git") if (source / ".git").exists() else str(source), "archive", "--format=tar", "HEAD", "--",
         *[f"packages/{name}" for name in SDK_PACKAGES], "packages/*/package.json"],
        capture_output=True,
    )
    if archive.returncode != 0 or not archive.stdout:
        _unavailable(f"cannot extract the Firebase JS SDK from {source}: {archive.stderr.decode(errors='replace')[:500]}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:
            tar.extractall(target)


def _stub_missing_manifests(packages):
    """@firebase/app reads other packages' names from their package.json (constants.ts); an
    extracted folder holding only the five packages lacks them, so this writes stand-ins of ours
    ({"name": "@firebase/<folder>"}) where one is missing."""
    for source_file in packages.rglob("*.ts"):
        for imported in re.findall(r"from '(\.[^']*package\.json)'", source_file.read_text(errors="replace")):
            manifest = (source_file.parent / imported).resolve()
            if not manifest.exists() and packages.parent.resolve() in manifest.parents:
                manifest.parent.mkdir(parents=True, exist_ok=True)
                name = "firebase" if manifest.parent.name == "firebase" else f"@firebase/{manifest.parent.name}"
                manifest.write_text(json.dumps({"name": name, "version": "0.0.0"}))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder with index.html, harness.js and sdk.js (the bundled SDK)."""
    source = _sdk_source()
    esbuild = os.environ.get("ESBUILD") or shutil.which("esbuild")
    if not esbuild:
        _unavailable("esbuild is not installed (apt-get install esbuild)")
    work = tmp_path_factory.mktemp("browser-sdk")
    _extract_sdk(source, work / "sdk")
    packages = work / "sdk" / "packages"
    missing = [name for name in SDK_PACKAGES if not (packages / name).is_dir()]
    if missing:
        _unavailable(f"the Firebase JS SDK source at {source} lacks packages/{', packages/'.join(missing)}")
    _stub_missing_manifests(packages)
    shims = work / "shims"
    shims.mkdir()
    (shims / "idb.js").write_text(IDB_SHIM)
    (shims / "tslib.js").write_text(TSLIB_SHIM)
    (shims / "tsconfig.json").write_text(TSCONFIG)
    (work / "entry.js").write_text(ENTRY.replace("@SDK@", (work / "sdk").as_posix()))
    output = work / "site"
    output.mkdir()
    aliases = {
        "@firebase/app": packages / "app" / "src" / "index.ts",
        "@firebase/database": packages / "database" / "src" / "index.ts",
        "@firebase/util": packages / "util" / "index.ts",
        "@firebase/component": packages / "component" / "index.ts",
        "@firebase/logger": packages / "logger" / "index.ts",
        "idb": shims / "idb.js",
        "tslib": shims / "tslib.js",
    }
    command = [esbuild, str(work / "entry.js"), "--bundle", "--format=iife", "--platform=browser", "--target=es2020",
               f"--tsconfig={shims / 'tsconfig.json'}", f"--outfile={output / 'sdk.js'}", "--log-level=error",
               *[f"--alias:{name}={path}" for name, path in aliases.items()]]
    built = subprocess.run(command, capture_output=True, text=True, cwd=work)
    if built.returncode != 0:
        pytest.fail("esbuild could not bundle the Firebase JS SDK:\n" + built.stdout + built.stderr)
    (output / "index.html").write_text(INDEX_HTML)
    (output / "harness.js").write_text(HARNESS_JS)
    return output


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@pytest.fixture(scope="module")
def page_port(site):
    """The page's own origin: http://127.0.0.1:PORT (and http://evil.test:PORT in Chromium)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


# ----------------------------------------------------------------------------------------------
# The server.

def _binary():
    binary = os.environ.get("KINDLING_BIN", str(ROOT / ".build" / "debug" / "kindling"))
    if not Path(binary).exists():
        pytest.fail(f"kindling binary not found at {binary}; build it or set KINDLING_BIN")
    return binary


class Kindling:
    """`kindling serve` on a loopback port with a data directory of its own; kill() and start()
    again keep both, as a restarted server would."""

    def __init__(self, binary, data_dir, log_path, extra=()):
        self.binary, self.data_dir, self.log_path, self.extra = binary, data_dir, log_path, list(extra)
        self.port = _free_port()
        self.process = None

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def start(self):
        log = open(self.log_path, "ab")
        log.write(f"---- kindling serve --port {self.port} {' '.join(self.extra)} ----\n".encode())
        log.flush()
        self.process = subprocess.Popen(
            [self.binary, "serve", "--port", str(self.port), "--data-dir", str(self.data_dir), *self.extra],
            stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.process.kill()
                    pytest.fail("kindling serve did not start:\n" + self.log_tail())
                time.sleep(0.05)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_tail(self, lines=60):
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def rest(self, namespace, path, method="GET", body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://{self.address}/{path.strip('/')}.json?ns={namespace}", data=data, method=method,
            headers={"Authorization": "Bearer owner"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def connection_gauges(self):
        """kindling_connections_open by transport, from /.metrics."""
        with urllib.request.urlopen(f"http://{self.address}/.metrics", timeout=10) as response:
            text = response.read().decode()
        gauges = {}
        for match in re.finditer(r'^kindling_connections_open\{[^}]*transport="([^"]+)"[^}]*\}\s+([0-9.eE+-]+)$', text, re.M):
            gauges[match.group(1)] = float(match.group(2))
        return gauges


class EventStream:
    """A REST event stream (SSE) on a path, read on a thread: the values of `last` in the order
    the server sent them."""

    def __init__(self, server, namespace, path):
        self.lasts, self.lines = [], 0
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        self.connection.request("GET", f"/{path}.json?ns={namespace}",
                                headers={"Accept": "text/event-stream", "Authorization": "Bearer owner"})
        self.response = self.connection.getresponse()
        assert self.response.status == 200, f"event stream answered {self.response.status}"
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        event = None
        try:
            while True:
                line = self.response.readline()
                if not line:
                    return
                self.lines += 1
                line = line.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:") and event in ("put", "patch"):
                    payload = json.loads(line[5:])
                    where, data = payload.get("path"), payload.get("data")
                    if where == "/" and isinstance(data, dict) and "last" in data:
                        self.lasts.append(data["last"])
                    elif where == "/last":
                        self.lasts.append(data)
        except (OSError, ValueError, http.client.HTTPException):
            return

    def close(self):
        with contextlib.suppress(OSError):
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()
        self.thread.join(timeout=5)


# ----------------------------------------------------------------------------------------------
# The browser.

def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """A headless Chromium whose console and network logs are kept across pages."""

    def __init__(self, page_port):
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = _chromium()
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1024,768",
                         f"--host-resolver-rules=MAP {FOREIGN_HOST} 127.0.0.1"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        self.page_port = page_port
        self.console, self.network = [], []
        self._requests = {}

    def quit(self):
        with contextlib.suppress(Exception):
            self.driver.quit()

    def open_page(self, host="127.0.0.1", wsfail=False):
        self.driver.get(f"http://{host}:{self.page_port}/index.html?wsfail={1 if wsfail else 0}")
        WebDriverWait(self.driver, 10).until(lambda d: d.execute_script("return !!(window.H && window.getDatabase)"))

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def call(self, expression, *args, timeout=20):
        """Runs an SDK call (a promise; `a` holds the arguments) in the page and returns its value."""
        self.driver.set_script_timeout(timeout)
        result = self.driver.execute_async_script(
            "const a = Array.from(arguments); const done = a.pop(); H.run(() => " + expression + ", done);", *args)
        if not result or not result.get("ok"):
            raise AssertionError(f"{expression} failed in the page: {result and result.get('error')}")
        return result["value"]

    def wait(self, what, condition, timeout):
        """Waits (bounded) until condition() is truthy; the message says what did not happen."""
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(lambda _: condition())
        except TimeoutException:
            raise AssertionError(f"within {timeout} s: {what}") from None

    def stays(self, what, condition, seconds):
        """Asserts condition() stays falsy for `seconds` (a bounded wait that must time out)."""
        try:
            WebDriverWait(self.driver, seconds, poll_frequency=0.2).until(lambda _: condition())
        except TimeoutException:
            return
        raise AssertionError(f"{what} happened within {seconds} s")

    def collect(self):
        """Moves Chromium's console and performance logs into self.console / self.network."""
        with contextlib.suppress(Exception):
            for entry in self.driver.get_log("browser"):
                message = entry.get("message", "")
                message = re.sub(r'^\S+ \d+:\d+ "?', "", message).rstrip('"').replace('\\"', '"')
                self.console.append(_short(f"{entry.get('level', '')[:4]} {message}", 400))
        with contextlib.suppress(Exception):
            for entry in self.driver.get_log("performance"):
                event = json.loads(entry["message"])["message"]
                self._network_event(event.get("method", ""), event.get("params", {}))

    def _network_event(self, method, params):
        request_id = params.get("requestId")
        if method == "Network.requestWillBeSent":
            request = params.get("request", {})
            record = {"kind": "http", "method": request.get("method"), "url": request.get("url", ""), "status": None,
                      "error": None, "origin": request.get("headers", {}).get("Origin")}
            self._requests[request_id] = record
            self.network.append(record)
        elif method == "Network.responseReceived" and request_id in self._requests:
            self._requests[request_id]["status"] = params.get("response", {}).get("status")
        elif method == "Network.responseReceivedExtraInfo" and request_id in self._requests:
            # Raw status from the network service: also there when Chromium's ORB blocks a
            # cross-origin script answer that is not JavaScript (responseReceived never comes).
            record = self._requests[request_id]
            record["status"] = record["status"] or params.get("statusCode")
        elif method == "Network.loadingFailed" and request_id in self._requests:
            record = self._requests[request_id]
            record["error"] = " ".join(str(x) for x in (params.get("errorText"), params.get("blockedReason"),
                                                        params.get("corsErrorStatus")) if x)
        elif method == "Network.webSocketCreated":
            record = {"kind": "ws", "method": "WS", "url": params.get("url", ""), "status": None, "error": None, "origin": None}
            self._requests[request_id] = record
            self.network.append(record)
        elif method == "Network.webSocketHandshakeResponseReceived" and request_id in self._requests:
            self._requests[request_id]["status"] = params.get("response", {}).get("status")
        elif method == "Network.webSocketClosed" and request_id in self._requests:
            self._requests[request_id]["error"] = (self._requests[request_id]["error"] or "") + " closed"
        elif method == "Network.webSocketFrameError" and request_id in self._requests:
            self._requests[request_id]["error"] = params.get("errorMessage")

    def database_requests(self, port):
        self.collect()
        return [record for record in self.network if f":{port}/" in record["url"]]

    def lp_requests(self, port):
        return [r for r in self.database_requests(port) if r["kind"] == "http" and "/.lp" in r["url"]]

    def ws_requests(self, port):
        return [r for r in self.database_requests(port) if r["kind"] == "ws"]


def _short(url, limit=180):
    return url if len(url) <= limit else url[:limit] + f"...(+{len(url) - limit})"


class Env:
    """A test's browser and servers, and what to print when it fails."""

    def __init__(self, browser, binary, tmp_path, page_port):
        self.browser, self.binary, self.tmp_path, self.page_port = browser, binary, tmp_path, page_port
        self.servers = []
        self.namespace = f"browser-{uuid.uuid4().hex[:8]}"

    def server(self, *extra):
        index = len(self.servers)
        server = Kindling(self.binary, self.tmp_path / f"data{index}", self.tmp_path / f"server{index}.log", extra)
        self.servers.append(server)
        return server.start()

    def url(self, server):
        return f"http://{server.address}?ns={self.namespace}"

    def report(self):
        browser = self.browser
        browser.collect()
        lines = []
        with contextlib.suppress(Exception):
            page_logs = [_short(line, 400) for line in browser.js("return window.H ? H.logs.slice(-40) : []")]
            errors = browser.js("return window.H ? H.errors : []")
            apps = browser.js("return window.H ? Object.fromEntries(Object.keys(H.apps).map(n => "
                              "[n, {connected: H.apps[n].connected, changes: H.apps[n].connectedChanges, transport: H.transport(n)}])) : {}")
            lines += ["== page state ==", f"apps: {json.dumps(apps)}", f"page errors: {errors}",
                      "previous_websocket_failure: " + repr(browser.js("return localStorage.getItem('firebase:previous_websocket_failure')")),
                      "== last SDK log lines on the current page ==", *page_logs]
        lines += ["== browser console (SDK log included), last 150 lines ==", *browser.console[-150:]]
        for server in self.servers:
            requests = browser.database_requests(server.port)
            lines.append(f"== requests to the database at {server.address} ({len(requests)}, last 60) ==")
            for record in requests[-60:]:
                outcome = record["status"] if record["status"] is not None else "-"
                lines.append(f"{record['method']} {_short(record['url'])} -> {outcome}"
                             + (f" [{record['error'].strip()}]" if record["error"] else "")
                             + (f" Origin: {record['origin']}" if record.get("origin") else ""))
            lines += [f"== server log ({server.log_path.name}, last 60 lines) ==", server.log_tail()]
        return "\n".join(lines)

    @contextlib.contextmanager
    def diagnose(self):
        try:
            yield
        except BaseException:
            text = self.report()
            print(text)
            artifacts = os.environ.get("KINDLING_BROWSER_ARTIFACTS")
            if artifacts:
                Path(artifacts).mkdir(parents=True, exist_ok=True)
                name = os.environ.get("PYTEST_CURRENT_TEST", "test").split(" ")[0].replace("/", "_").replace("::", "-")
                (Path(artifacts) / f"{name}.txt").write_text(text)
            raise


@pytest.fixture
def env(site, page_port, tmp_path):
    if not _chromium() or not shutil.which("chromedriver"):
        _unavailable("chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
    binary = _binary()
    browser = Browser(page_port)
    environment = Env(browser, binary, tmp_path, page_port)
    yield environment
    browser.quit()
    for server in environment.servers:
        server.stop()


def _connected(browser, name):
    return lambda: browser.js("return H.apps[arguments[0]].connected === true", name)


def _transport(browser, name):
    return browser.js("return H.transport(arguments[0])", name)


def _sdk_logged(browser, text):
    browser.collect()
    return [line for line in browser.console if text in line]


def _rest_wait(browser, what, check, timeout):
    """Waits (bounded) for a REST condition, polling every 100 ms."""
    return browser.wait(what, check, timeout)


# ----------------------------------------------------------------------------------------------
# Scenarios.

def test_1_websocket_only_two_apps(env):
    """forceWebSockets(): two apps (two connections) in one page; set, get, onValue, a
    transaction from both at once, and onDisconnect seen by the other app."""
    server = env.server()
    b = env.browser
    with env.diagnose():
        b.open_page()
        b.js("H.open('a', arguments[0], 'ws'); H.open('b', arguments[0], 'ws')", env.url(server))
        b.wait("app a connected", _connected(b, "a"), 15)
        b.wait("app b connected", _connected(b, "b"), 15)
        assert _transport(b, "a") == "websocket" and _transport(b, "b") == "websocket"

        b.js("H.listen('a', 'room/message')")
        b.call("H.set('b', 'room/message', {text: 'hello', n: 1})")
        b.wait("a's onValue saw b's write", lambda: {"text": "hello", "n": 1} in b.js("return H.events('a', 'room/message')"), 10)
        assert b.call("H.get('a', 'room/message')") == {"text": "hello", "n": 1}
        assert server.rest(env.namespace, "room/message") == {"text": "hello", "n": 1}

        # Ten increments, five from each app at once: the server's compare-and-set makes them all count.
        results = b.call("Promise.all([0,1,2,3,4].flatMap(() => [H.increment('a', 'room/count'), H.increment('b', 'room/count')]))")
        assert all(result["committed"] for result in results)
        assert server.rest(env.namespace, "room/count") == 10

        b.js("H.listen('a', 'presence/b')")
        b.call("H.onDisconnectSet('b', 'presence/b', 'offline')")
        b.call("H.set('b', 'presence/b', 'online')")
        b.wait("a saw b online", lambda: b.js("return H.events('a', 'presence/b').slice(-1)[0]") == "online", 10)
        b.js("H.offline('b')")
        b.wait("b's onDisconnect reached a", lambda: b.js("return H.events('a', 'presence/b').slice(-1)[0]") == "offline", 15)
        assert server.rest(env.namespace, "presence/b") == "offline"
        b.js("H.online('b')")
        b.wait("b connected again after goOnline", _connected(b, "b"), 15)
        assert b.call("H.get('b', 'room/count')") == 10

        assert b.lp_requests(server.port) == [], "forceWebSockets() must not long-poll"
        assert b.js("return H.errors") == []


def test_2_force_long_polling(env):
    """forceLongPolling(): the page connects over /.lp only; set, get, onValue, a transaction; a
    REST write by another client reaches its listener; its onDisconnect runs when it navigates away."""
    server = env.server()
    b = env.browser
    with env.diagnose():
        b.open_page()
        b.js("H.open('lp', arguments[0], 'lp')", env.url(server))
        b.wait("the long-polling page connected", _connected(b, "lp"), 30)
        assert _transport(b, "lp") == "longpoll"
        assert any("start=t" in r["url"] for r in b.lp_requests(server.port))

        b.call("H.set('lp', 'poll/value', {via: 'long-poll', n: 1})")
        assert server.rest(env.namespace, "poll/value") == {"via": "long-poll", "n": 1}
        assert b.call("H.get('lp', 'poll/value')") == {"via": "long-poll", "n": 1}

        b.js("H.listen('lp', 'poll/fromRest')")
        server.rest(env.namespace, "poll/fromRest", "PUT", {"by": "curl", "at": 42})
        b.wait("a REST write reached the page's listener", lambda: {"by": "curl", "at": 42} in b.js("return H.events('lp', 'poll/fromRest')"), 15)

        results = b.call("Promise.all([H.increment('lp', 'poll/count'), H.increment('lp', 'poll/count'), H.increment('lp', 'poll/count')])")
        assert [r["committed"] for r in results] == [True, True, True]
        assert server.rest(env.namespace, "poll/count") == 3

        # A bigger write than one long-poll request carries (the SDK splits it into segments), text
        # beyond ASCII (the segments are base64 of UTF-8), and a large value the other way.
        big = "x" * 6000
        b.call("H.set('lp', 'poll/big', arguments[0])", big)
        assert server.rest(env.namespace, "poll/big") == big
        text = "h\u00e9llo \u2713 \U0001F600 \u2014 \u4f60\u597d </script><!-- \\ \" '"
        b.call("H.set('lp', 'poll/text', arguments[0])", text)
        assert server.rest(env.namespace, "poll/text") == text
        b.js("H.listen('lp', 'poll/text')")
        b.wait("the page's listener saw the text", lambda: b.js("return H.events('lp', 'poll/text').slice(-1)[0]") == text, 10)
        large = {f"k{i}": "y" * 1000 + f"\u00e9{i}" for i in range(300)}
        b.js("H.listen('lp', 'poll/large')")
        server.rest(env.namespace, "poll/large", "PUT", large)
        b.wait("a 300 KB REST write reached the long-polling listener",
               lambda: b.js("const v = H.events('lp', 'poll/large').slice(-1)[0]; return v ? Object.keys(v).length : 0") == 300, 20)
        assert b.js("return H.events('lp', 'poll/large').slice(-1)[0]") == large

        # A second app in the page: its own long-poll session (own callbacks and frames); the two
        # see each other's writes and contend in transactions.
        b.js("H.open('lp2', arguments[0], 'lp')", env.url(server))
        b.wait("the second long-polling app connected", _connected(b, "lp2"), 30)
        gauges = server.connection_gauges()
        print("connection gauges with two long-polling apps:", gauges)
        assert gauges.get("websocket", 0) == 0
        for name in [name for name in gauges if re.search(r"poll|lp", name)]:
            assert gauges[name] == 2, f"kindling_connections_open{{transport={name!r}}} is {gauges[name]} with two long-polling apps"
        b.js("H.listen('lp', 'poll/fromSecond')")
        b.call("H.set('lp2', 'poll/fromSecond', 'hi from lp2')")
        b.wait("the first app saw the second's write", lambda: b.js("return H.events('lp', 'poll/fromSecond').slice(-1)[0]") == "hi from lp2", 15)
        results = b.call("Promise.all([0,1,2,3,4].flatMap(() => [H.increment('lp', 'poll/shared'), H.increment('lp2', 'poll/shared')]))")
        assert all(r["committed"] for r in results)
        assert server.rest(env.namespace, "poll/shared") == 10

        b.call("H.onDisconnectSet('lp', 'poll/presence', 'gone')")
        b.call("H.set('lp', 'poll/presence', 'here')")
        assert server.rest(env.namespace, "poll/presence") == "here"
        assert b.ws_requests(server.port) == [], "forceLongPolling() must not open a WebSocket"
        assert b.js("return H.errors") == []
        b.collect()
        left = time.monotonic()
        b.driver.get("about:blank")
        _rest_wait(b, "onDisconnect ran after the long-polling page navigated away",
                   lambda: server.rest(env.namespace, "poll/presence") == "gone", 45)
        print(f"onDisconnect ran {time.monotonic() - left:.2f} s after the page left")


@pytest.mark.alone
def test_2b_long_polling_stays_connected_while_idle(env):
    """A long-polling page that does nothing for 35 s, past the SDK's 25 s keep-alive (it opens a
    new poll beside one the server still holds) and past the server's idle timeout (8 s here),
    stays connected: no onDisconnect runs, and a REST write after the silence reaches it."""
    server = env.server("--idle-timeout", "8", "--header-timeout", "8")
    b = env.browser
    with env.diagnose():
        b.open_page()
        b.js("H.open('idle', arguments[0], 'lp')", env.url(server))
        b.wait("the long-polling page connected", _connected(b, "idle"), 30)
        b.js("H.listen('idle', 'quiet/value')")
        b.call("H.onDisconnectSet('idle', 'quiet/presence', 'gone')")
        b.call("H.set('idle', 'quiet/presence', 'here')")
        b.stays("the idle long-polling page lost its connection",
                lambda: b.js("return H.apps.idle.connectedChanges.length > 2")  # [false, true] and then a change
                or server.rest(env.namespace, "quiet/presence") != "here", 35)
        server.rest(env.namespace, "quiet/value", "PUT", "after the silence")
        b.wait("a REST write after 35 s of silence reached the long-polling listener",
               lambda: b.js("return H.events('idle', 'quiet/value').slice(-1)[0]") == "after the silence", 15)
        assert b.js("return H.apps.idle.connected") is True
        assert _transport(b, "idle") == "longpoll"
        b.call("H.set('idle', 'quiet/back', 1)")
        assert server.rest(env.namespace, "quiet/back") == 1
        assert server.rest(env.namespace, "quiet/presence") == "here"
        polls = b.lp_requests(server.port)
        print("long-poll requests while idle:", dict(collections.Counter(str(r["status"]) for r in polls)), len(polls))


def test_3_websocket_failure_flag_starts_on_long_polling_and_upgrades(env):
    """With firebase:previous_websocket_failure set before the SDK loads, the SDK starts on long
    polling and upgrades to a WebSocket; data keeps flowing both ways across the upgrade: the
    page's writes (queued, on long polling, a burst as the upgrade starts, then on the WebSocket)
    all arrive in order, and so do REST writes made all along to a path the page listens to; the
    flag is cleared once the WebSocket is healthy; the onDisconnect write queued over long polling
    is made when the upgraded page leaves."""
    server = env.server()
    b = env.browser
    stream = EventStream(server, env.namespace, "seq")
    stop, written, failures = threading.Event(), [], []

    def write_down():
        """Another client's writes, every ~10 ms, while the page connects and upgrades."""
        for k in range(600):
            if stop.is_set():
                return
            try:
                server.rest(env.namespace, "down/last", "PUT", k)
                written.append(k)
            except (OSError, urllib.error.URLError) as error:
                failures.append(f"{k}: {error}")
                return
            time.sleep(0.01)

    writer = threading.Thread(target=write_down, daemon=True)
    try:
        with env.diagnose():
            b.open_page(wsfail=True)
            assert b.js("return H.flag()") == "true"
            b.js("H.open('up', arguments[0], 'auto'); H.listen('up', 'down/last'); H.writeLoop('up', 'seq', 10, 40, 1500, 20);"
                 "H.onDisconnectSet('up', 'presence', 'gone'); H.set('up', 'presence', 'here')", env.url(server))
            writer.start()
            b.wait("the page connected", _connected(b, "up"), 30)
            assert _sdk_logged(b, "Connecting via long-poll"), "the SDK did not start on long polling"
            b.wait("the upgrade to WebSocket", lambda: _transport(b, "up") == "websocket", 40)
            b.wait("the write loop finished", lambda: b.js("return H.loop('up').done"), 30)
            stop.set()
            writer.join(timeout=10)
            loop = b.js("return H.loop('up')")
            print("write loop:", json.dumps(loop))
            issued = loop["issued"]
            assert loop["errors"] == []
            assert loop["wsFrom"] is not None and loop["wsFrom"] > 0, f"no write was issued before the upgrade: {loop['transports']}"
            # The writes queued before the connection go out on the long poll (the SDK sends them as
            # soon as it is ready, before the upgrade can end); whether a 10 ms tick also saw the
            # long poll or the upgrade under way (then a burst was sent) depends on timing.
            b.wait("every write acknowledged", lambda: b.js("return H.loop('up').acked") == issued, 30)
            data = server.rest(env.namespace, "seq")
            items = data.get("items") if isinstance(data, dict) else None
            if isinstance(items, list):
                items = {str(i): v for i, v in enumerate(items) if v is not None}
            assert data["last"] == issued - 1
            assert sorted(int(k) for k in (items or {})) == list(range(issued)), "writes were lost across the upgrade"
            b.wait("the event stream saw the last write", lambda: stream.lasts and stream.lasts[-1] == issued - 1, 15)
            assert stream.lasts == sorted(set(stream.lasts)), f"writes applied out of order: {stream.lasts}"

            assert failures == [] and written, f"REST writes failed: {failures}"
            b.wait("the page's listener saw the last REST write",
                   lambda: b.js("return H.events('up', 'down/last').slice(-1)[0]") == written[-1], 15)
            seen = [value for value in b.js("return H.events('up', 'down/last')") if value is not None]
            print(f"REST writes: {len(written)}, values the page's listener saw: {len(seen)}")
            assert seen == sorted(set(seen)), f"the page saw REST writes out of order: {seen}"

            b.wait("the SDK cleared firebase:previous_websocket_failure", lambda: b.js("return H.flag()") is None, 30)
            gauges = server.connection_gauges()
            print("connection gauges after the upgrade:", gauges)
            assert gauges.get("websocket", 0) >= 1
            polling = [name for name in gauges if re.search(r"poll|lp", name)]
            for name in polling:
                _rest_wait(b, f"the long-polling connection closed (gauge {name})",
                           lambda: server.connection_gauges().get(name, 0) == 0, 30)
            assert b.js("return H.errors") == []
            # The onDisconnect write was queued on the long poll; the WebSocket that took the
            # session over must make it when the page goes.
            assert server.rest(env.namespace, "presence") == "here"
            b.collect()
            b.driver.get("about:blank")
            _rest_wait(b, "the onDisconnect queued over long polling ran when the upgraded page left",
                       lambda: server.rest(env.namespace, "presence") == "gone", 30)
    finally:
        stop.set()
        stream.close()


def test_4_server_killed_and_restarted_under_an_open_page(env):
    """SIGKILL, then the same port and data directory again: the page reconnects (long polling
    first, as its failed WebSocket attempt set the flag), upgrades to a WebSocket, clears the flag,
    and its listener sees a value written after the restart; the onDisconnect write it had queued
    is made by the restarted server."""
    server = env.server()
    b = env.browser
    with env.diagnose():
        b.open_page()
        b.js("H.open('k', arguments[0], 'auto')", env.url(server))
        b.wait("the page connected", _connected(b, "k"), 20)
        b.js("H.listen('k', 'restart/value')")
        b.call("H.set('k', 'restart/value', 'before')")
        b.call("H.onDisconnectSet('k', 'restart/presence', 'gone')")
        b.call("H.set('k', 'restart/presence', 'here')")
        b.wait("the WebSocket is healthy (flag cleared)", lambda: b.js("return H.flag()") is None, 20)
        assert _transport(b, "k") == "websocket"

        server.kill()
        b.wait("the page saw the connection drop", lambda: b.js("return H.apps.k.connected") is False, 20)
        b.wait("a failed WebSocket attempt set firebase:previous_websocket_failure",
               lambda: b.js("return H.flag()") == "true", 30)
        logged_before = len(_sdk_logged(b, "Connecting via long-poll"))
        server.start()
        restarted = time.monotonic()
        b.wait("the page reconnected after the restart", _connected(b, "k"), 60)
        print(f"reconnected {time.monotonic() - restarted:.2f} s after the restart")
        server.rest(env.namespace, "restart/value", "PUT", "after")
        b.wait("the listener saw a value written after the restart",
               lambda: b.js("return H.events('k', 'restart/value').slice(-1)[0]") == "after", 20)
        assert len(_sdk_logged(b, "Connecting via long-poll")) > logged_before, "the reconnect did not start on long polling"
        b.wait("the reconnected page upgraded to WebSocket", lambda: _transport(b, "k") == "websocket", 40)
        b.wait("the flag ended cleared", lambda: b.js("return H.flag()") is None, 30)
        assert b.call("H.get('k', 'restart/value')") == "after"
        _rest_wait(b, "the killed connection's onDisconnect write was made after the restart",
                   lambda: server.rest(env.namespace, "restart/presence") == "gone", 20)


def test_4b_server_killed_under_a_long_polling_page(env):
    """The same with forceLongPolling(): the held polls fail, the page reconnects over /.lp to the
    restarted server, its listener sees a value written after the restart, and the onDisconnect
    write its long-polling session had queued is made by the restarted server."""
    server = env.server()
    b = env.browser
    with env.diagnose():
        b.open_page()
        b.js("H.open('k', arguments[0], 'lp')", env.url(server))
        b.wait("the page connected", _connected(b, "k"), 30)
        b.js("H.listen('k', 'restart/value')")
        b.call("H.set('k', 'restart/value', 'before')")
        b.call("H.onDisconnectSet('k', 'restart/presence', 'gone')")
        b.call("H.set('k', 'restart/presence', 'here')")

        server.kill()
        b.wait("the page saw the connection drop", lambda: b.js("return H.apps.k.connected") is False, 40)
        server.start()
        restarted = time.monotonic()
        b.wait("the page reconnected after the restart", _connected(b, "k"), 60)
        print(f"reconnected {time.monotonic() - restarted:.2f} s after the restart")
        assert _transport(b, "k") == "longpoll"
        server.rest(env.namespace, "restart/value", "PUT", "after")
        b.wait("the listener saw a value written after the restart",
               lambda: b.js("return H.events('k', 'restart/value').slice(-1)[0]") == "after", 20)
        _rest_wait(b, "the killed long-polling session's onDisconnect write was made after the restart",
                   lambda: server.rest(env.namespace, "restart/presence") == "gone", 20)
        assert b.ws_requests(server.port) == []


@pytest.mark.parametrize("transport", ["lp", "ws"])
def test_5_non_loopback_origin_refused_unless_cors_origin(env, transport):
    """A page at http://evil.test:PORT (127.0.0.1 for Chromium, but not a loopback name) does not
    connect; with --cors-origin http://evil.test:PORT it does."""
    b = env.browser
    origin = f"http://{FOREIGN_HOST}:{env.page_port}"
    with env.diagnose():
        refusing = env.server()
        b.open_page(host=FOREIGN_HOST)
        assert b.js("return location.origin") == origin
        b.js("H.open('evil', arguments[0], arguments[1])", env.url(refusing), transport)
        if transport == "lp":
            b.wait("the SDK asked /.lp to start", lambda: any("start=t" in r["url"] for r in b.lp_requests(refusing.port)), 15)
        else:
            b.wait("the SDK opened a WebSocket", lambda: b.ws_requests(refusing.port), 15)
        b.stays("the foreign page connected", _connected(b, "evil"), 8)
        if transport == "lp":
            starts = [r for r in b.lp_requests(refusing.port) if "start=t" in r["url"]]
            assert starts and all(r["status"] in (400, 401, 403) for r in starts), \
                f"the long-poll start was not refused with 400/401/403 (a 404 means /.lp is not served): {[(r['status'], r['error']) for r in starts]}"
        assert not _sdk_logged(b, "Realtime connection established")
        answers = collections.Counter(f"{r['status']} {(r['error'] or '').strip()}" for r in b.database_requests(refusing.port))
        print(f"refused ({transport}): {dict(answers)}")

        allowing = env.server("--cors-origin", origin)
        b.open_page(host=FOREIGN_HOST)
        b.js("H.open('evil', arguments[0], arguments[1])", env.url(allowing), transport)
        b.wait("the page allowed by --cors-origin connected", _connected(b, "evil"), 30)
        assert _transport(b, "evil") == ("longpoll" if transport == "lp" else "websocket")
        b.call("H.set('evil', 'probe', 'allowed')")
        assert allowing.rest(env.namespace, "probe") == "allowed"
