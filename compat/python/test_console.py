"""The web console at /.console, driven in headless Chromium (Debian's `chromium` and
`chromium-driver`) through Selenium: it loads cleanly, shows and follows the data live, edits
through the REST API, queries, pages a node with 100,000 children, and every control can be
reached by keyboard. The tests take screenshots of the tree, the query panel and the rules
view: into docs/, which README.md shows, with KINDLING_SCREENSHOTS=docs; otherwise into a
temporary folder, so a test run leaves the working tree as it was.
"""
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from selenium import webdriver  # requirements.txt installs it: a missing selenium is a failure, not a skip
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Each run uses namespaces of its own: the server's data directory outlives the run.
RUN = uuid.uuid4().hex[:8]


def wait(driver, timeout):
    """Waits that retry when the live tree has replaced an element between look-up and use."""
    return WebDriverWait(driver, timeout, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """Where the screenshots go: docs/ with KINDLING_SCREENSHOTS=docs, else pytest's own
    temporary folder (it keeps the last three runs')."""
    if os.environ.get("KINDLING_SCREENSHOTS") == "docs":
        return ROOT / "docs"
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def browser():
    binary, driver_path = _chromium(), shutil.which("chromedriver")
    if not binary or not driver_path:
        if os.environ.get("CI"):
            pytest.fail("chromium and chromium-driver are needed for the console tests (scripts/setup.sh installs them)")
        pytest.skip("chromium or chromedriver is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,820", "--force-color-profile=srgb"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


def rest(server, namespace, path, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://{server}/{path.strip('/')}.json?ns={namespace}", data=data, method=method,
        headers={"Authorization": "Bearer owner"},
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"null")


def open_console(driver, server, namespace):
    driver.get(f"http://{server}/.console?ns={namespace}")
    try:
        wait(driver, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    except Exception:
        print("console did not start:", driver.get_log("browser"), driver.page_source[:3000])
        raise


def row(driver, *path, timeout=5):
    """The tree item at a path, once shown."""
    selector = "#tree > li" + "".join(f' > ul > li[aria-label^="{key}:"]' for key in path)
    return wait(driver, timeout).until(lambda d: d.find_element(By.CSS_SELECTOR, selector))


def expand(driver, *path):
    item = row(driver, *path)
    if item.get_attribute("aria-expanded") != "true":
        item.find_element(By.CSS_SELECTOR, ".twisty").click()
    wait(driver, 5).until(lambda d: item.find_elements(By.CSS_SELECTOR, ":scope > ul > li"))
    return item


def severe_logs(driver, expected=()):
    """Errors in the browser's console, less the failed requests a test caused on purpose."""
    return [entry for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and not any(text in entry["message"] for text in expected)]


def test_console_serves_its_assets_with_a_strict_policy(server):
    with urllib.request.urlopen(f"http://{server}/.console") as response:
        assert response.headers["Content-Type"].startswith("text/html")
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        etag = response.headers["ETag"]
    request = urllib.request.Request(f"http://{server}/.console/app.js", headers={"If-None-Match": '"nope"'})
    with urllib.request.urlopen(request) as response:
        assert response.headers["Content-Type"].startswith("text/javascript")
    request = urllib.request.Request(f"http://{server}/.console", headers={"If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request)
    assert answer.value.code == 304


def test_loads_without_console_errors_and_shows_data(browser, server):
    namespace = f"console-{RUN}"
    rest(server, namespace, "/", "PUT", {
        "users": {"alice": {"name": "Alice", "age": 31, "admin": True}, "bob": {"name": "Bob", "age": 27, "admin": False}},
        "rooms": {"lobby": {"title": "Lobby", "open": True, "messages": {
            "-NxA1": {"from": "alice", "text": "Morning! Who has the seating plan?", "at": 1795480000000},
            "-NxA2": {"from": "bob", "text": "Pinned it in #plans", "at": 1795480042000},
        }}},
        "motd": "Welcome!",
    })
    open_console(browser, server, namespace)
    expand(browser, "users")
    expand(browser, "users", "alice")
    assert row(browser, "users", "alice", "age").get_attribute("aria-label") == "age: 31"
    assert row(browser, "users", "alice", "name").get_attribute("aria-label") == 'name: "Alice"'
    assert row(browser, "motd").get_attribute("aria-label") == 'motd: "Welcome!"'
    assert severe_logs(browser) == []


def test_a_rest_write_appears_within_a_second_and_flashes(browser, server, shots):
    namespace = f"console-{RUN}"
    started = time.monotonic()
    rest(server, namespace, "users/carol", "PUT", {"name": "Carol", "age": 40})
    carol = row(browser, "users", "carol", timeout=1)
    assert time.monotonic() - started < 1.0
    assert "flash-added" in carol.find_element(By.CSS_SELECTOR, ".row").get_attribute("class")
    rest(server, namespace, "users/alice/age", "PUT", 32)
    age = row(browser, "users", "alice", "age")
    wait(browser, 1).until(lambda d: age.get_attribute("aria-label") == "age: 32")
    assert "flash-changed" in age.find_element(By.CSS_SELECTOR, ".row").get_attribute("class")
    rest(server, namespace, "users/alice/admin", "PUT", False)
    admin = row(browser, "users", "alice", "admin")
    wait(browser, 1).until(lambda d: admin.get_attribute("aria-label") == "admin: false")
    rest(server, namespace, "users/alice/admin", "DELETE")
    wait(browser, 1).until(lambda d: "flash-removed" in admin.find_element(By.CSS_SELECTOR, ".row").get_attribute("class"))
    rest(server, namespace, "users/alice/admin", "PUT", True)
    expand(browser, "rooms")
    expand(browser, "rooms", "lobby")
    expand(browser, "rooms", "lobby", "messages")
    expand(browser, "rooms", "lobby", "messages", "-NxA2")
    rest(server, namespace, "rooms/lobby/messages/-NxA3", "PUT", {"from": "carol", "text": "Thanks!"})
    row(browser, "rooms", "lobby", "messages", "-NxA3", timeout=1)
    rest(server, namespace, "users/alice/admin", "DELETE")
    time.sleep(0.25)
    browser.save_screenshot(str(shots / "console-tree.png"))


def test_edit_add_and_delete_in_the_console_show_over_rest(browser, server):
    namespace = f"console-{RUN}"
    # Inline edit keeps the type: a number stays a number.
    age = row(browser, "users", "bob", timeout=5)
    expand(browser, "users", "bob")
    age = row(browser, "users", "bob", "age")
    age.find_element(By.CSS_SELECTOR, ".key").click()
    age.send_keys(Keys.ENTER)
    field = browser.switch_to.active_element
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("28", Keys.ENTER)
    wait(browser, 3).until(lambda d: rest(server, namespace, "users/bob/age") == 28)
    # Text that is not JSON is saved as a string (and a double-click edits too).
    name = row(browser, "users", "bob", "name")
    browser.execute_script("""
        const value = arguments[0].querySelector('.value');
        for (const detail of [1, 2]) value.dispatchEvent(new MouseEvent('click', { bubbles: true, detail }));
    """, name)
    field = wait(browser, 2).until(lambda d: d.find_element(By.CSS_SELECTOR, "input.inline-edit"))
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("Robert", Keys.ENTER)
    wait(browser, 3).until(lambda d: rest(server, namespace, "users/bob/name") == "Robert")
    # A child with a chosen key, then one with a push id.
    row(browser, "users").find_element(By.CSS_SELECTOR, ".key").click()
    browser.find_element(By.ID, "act-add").click()
    browser.find_element(By.ID, "add-key").send_keys("dave")
    browser.find_element(By.ID, "add-value").send_keys('{"name": "Dave", "age": 19}', Keys.ENTER)
    wait(browser, 3).until(lambda d: rest(server, namespace, "users/dave") == {"name": "Dave", "age": 19})
    row(browser, "rooms").find_element(By.CSS_SELECTOR, ".key").click()
    browser.find_element(By.ID, "act-add").click()
    browser.find_element(By.ID, "add-value").send_keys('"pushed"', Keys.ENTER)
    wait(browser, 3).until(lambda d: "pushed" in (rest(server, namespace, "rooms") or {}).values())
    pushed = [key for key, value in rest(server, namespace, "rooms").items() if value == "pushed"]
    assert len(pushed) == 1 and pushed[0].startswith("-") and len(pushed[0]) == 20
    # Delete asks first, saying how many children go.
    row(browser, "users", "dave").find_element(By.CSS_SELECTOR, ".key").click()
    browser.switch_to.active_element.send_keys(Keys.DELETE)
    dialog = wait(browser, 3).until(lambda d: d.find_element(By.CSS_SELECTOR, "#dialog[open]"))
    assert "2 children" in dialog.find_element(By.ID, "dialog-text").text
    browser.find_element(By.ID, "dialog-ok").click()
    wait(browser, 3).until(lambda d: rest(server, namespace, "users/dave") is None)
    assert severe_logs(browser) == []


def test_import_export_and_the_database_switcher(browser, server, tmp_path):
    namespace, other = f"console-io-{RUN}", f"console-other-{RUN}"
    rest(server, namespace, "inventory", "PUT", {"apples": 3})
    rest(server, other, "elsewhere", "PUT", True)
    open_console(browser, server, namespace)
    row(browser, "inventory").find_element(By.CSS_SELECTOR, ".key").click()
    # Import replaces the node with a file's JSON, after asking.
    upload = tmp_path / "inventory.json"
    upload.write_text(json.dumps({"pears": 5, "plums": {"ripe": True}}))
    browser.find_element(By.ID, "import-file").send_keys(str(upload))
    dialog = wait(browser, 3).until(lambda d: d.find_element(By.CSS_SELECTOR, "#dialog[open]"))
    assert "inventory.json" in dialog.find_element(By.ID, "dialog-text").text
    browser.find_element(By.ID, "dialog-ok").click()
    wait(browser, 3).until(lambda d: rest(server, namespace, "inventory") == {"pears": 5, "plums": {"ripe": True}})
    # Export hands the browser the node's JSON as a file.
    browser.execute_script("""
        const original = URL.createObjectURL;
        URL.createObjectURL = (blob) => { window.exported = blob; return original(blob); };
        HTMLAnchorElement.prototype.click = function () { window.exportedName = this.download; };
    """)
    browser.find_element(By.ID, "act-export").click()
    exported = browser.execute_async_script("""
        const done = arguments[0];
        const poll = () => window.exported ? window.exported.text().then(done) : setTimeout(poll, 20);
        poll();
    """)
    assert json.loads(exported) == {"pears": 5, "plums": {"ripe": True}}
    assert browser.execute_script("return window.exportedName") == f"{namespace}-inventory.json"
    # The switcher lists the databases and shows the chosen one.
    from selenium.webdriver.support.ui import Select

    switcher = Select(browser.find_element(By.ID, "namespace"))
    wait(browser, 3).until(lambda d: other in [option.get_attribute("value") for option in switcher.options])
    switcher.select_by_value(other)
    # The first page comes shallow, where a child `true` may be an object (`{…}`) or the
    # boolean; the tree's event stream then brings the value itself.
    wait(browser, 3).until(lambda d: row(d, "elsewhere").get_attribute("aria-label") == "elsewhere: true")
    assert f"ns={other}" in browser.current_url
    assert severe_logs(browser) == []


def test_query_with_limit_to_last_shows_the_right_children(browser, server, shots):
    namespace = f"console-{RUN}"
    rest(server, namespace, "scores", "PUT", {
        "ann": {"score": 12}, "ben": {"score": 88}, "cid": {"score": 47}, "dee": {"score": 95}, "eve": {"score": 3}, "fay": {"score": 61},
    })
    open_console(browser, server, namespace)
    browser.find_element(By.ID, "tab-query").click()
    path = browser.find_element(By.ID, "q-path")
    path.clear()
    path.send_keys("/scores")
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "q-order")).select_by_visible_text("child…")
    browser.find_element(By.ID, "q-child").send_keys("score")
    browser.find_element(By.ID, "q-last").send_keys("3")
    browser.find_element(By.CSS_SELECTOR, "#query-form button[type=submit]").click()

    def keys(driver):
        return [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#q-result .key")]

    wait(browser, 3).until(lambda d: keys(d) == ["fay", "ben", "dee"])
    rest_url = browser.find_element(By.ID, "q-rest").text
    assert "limitToLast=3" in rest_url and "orderBy=%22score%22" in rest_url
    assert 'orderByChild("score")' in browser.find_element(By.ID, "q-sdk").text
    # The result is live.
    rest(server, namespace, "scores/gus", "PUT", {"score": 70})
    wait(browser, 2).until(lambda d: keys(d) == ["gus", "ben", "dee"])
    assert browser.find_element(By.CSS_SELECTOR, "#q-result li:first-child").get_attribute("class") == "flash-added"
    wait(browser, 6).until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".toast"))
    browser.save_screenshot(str(shots / "console-query.png"))
    browser.find_element(By.ID, "q-stop").click()
    # A query the server refuses says why.
    browser.find_element(By.ID, "q-first").send_keys("2")
    browser.find_element(By.CSS_SELECTOR, "#query-form button[type=submit]").click()
    wait(browser, 3).until(lambda d: "limitToFirst" in d.find_element(By.ID, "q-count").text)
    assert "error" in browser.find_element(By.ID, "q-count").get_attribute("class")
    assert severe_logs(browser, expected=["limitToFirst=2&limitToLast=3"]) == []
    browser.find_element(By.ID, "tab-data").click()


def test_a_node_with_100000_children_opens_fast_and_pages(browser, server):
    namespace = f"console-big-{RUN}"
    children = {f"item{index:06d}": index for index in range(100_000)}
    rest(server, namespace, "big", "PUT", children)
    rest(server, namespace, "small", "PUT", {"a": 1})
    open_console(browser, server, namespace)
    big = row(browser, "big")
    # Timed in the page: from the click until the first page's 100 rows show their values.
    elapsed_ms = browser.execute_async_script("""
        const [item, done] = arguments;
        const started = performance.now();
        item.querySelector('.twisty').click();
        const check = () => {
          const rows = item.querySelectorAll(':scope > ul > li[role=treeitem] .value.t-number');
          if (rows.length === 100) done(performance.now() - started);
          else if (performance.now() - started > 5000) done(-1);
          else requestAnimationFrame(check);
        };
        check();
    """, big)
    print(f"100,000 children: first page shown in {elapsed_ms:.0f} ms (shallow page load {big.get_attribute('data-load-ms')} ms)")
    assert 0 <= elapsed_ms < 1000
    first = row(browser, "big").find_element(By.CSS_SELECTOR, ":scope > ul > li[role=treeitem]")
    wait(browser, 2).until(lambda d: first.get_attribute("aria-label") == "item000000: 0")
    # The view does not jump: rows added above the one being read leave it where it is.
    reading = row(browser, "big", "item000050")
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", reading)
    before = reading.rect["y"]
    rest(server, namespace, "big/item000010a", "PUT", "new")
    rest(server, namespace, "big/item000020a", "PUT", "new")
    wait(browser, 1).until(lambda d: row(d, "big", "item000020a"))
    assert abs(reading.rect["y"] - before) <= 2
    big.find_element(By.XPATH, ".//button[text()='Next page ›']").click()
    def page(driver):
        return driver.execute_script(
            "return [...arguments[0].querySelectorAll(':scope > ul > li[role=treeitem]')].map((item) => item.getAttribute('aria-label'))", big)

    wait(browser, 3).until(lambda d: page(d)[:1] == ["item000098: 98"])
    assert len(page(browser)) == 100 and page(browser)[-1] == "item000197: 197"
    # A key far down is one jump away.
    jump = big.find_element(By.CSS_SELECTOR, ".pager input")
    jump.send_keys("item050000", Keys.ENTER)
    wait(browser, 3).until(lambda d: page(d)[:1] == ["item050000: 50000"])
    browser.find_element(By.XPATH, "//button[text()='‹ Previous page']").click()
    wait(browser, 3).until(lambda d: page(d)[:1] == ["item000098: 98"])
    # The page is live too.
    rest(server, namespace, "big/item000150", "PUT", -1)
    wait(browser, 1).until(lambda d: row(d, "big", "item000150").get_attribute("aria-label") == "item000150: -1")
    assert severe_logs(browser) == []


def test_rules_view_shows_errors_at_their_line_and_simulates(browser, server, shots):
    namespace = f"console-rules-{RUN}"
    rest(server, namespace, "users/alice", "PUT", {"name": "Alice"})
    open_console(browser, server, namespace)
    browser.find_element(By.ID, "tab-rules").click()
    text = browser.find_element(By.ID, "rules-text")
    wait(browser, 3).until(lambda d: ".read" in text.get_attribute("value"))
    good = '{\n  "rules": {\n    "users": {\n      "$uid": {\n        ".read": "auth != null && auth.uid == $uid",\n        ".write": false\n      }\n    }\n  }\n}'
    set_text = "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))"
    browser.execute_script(set_text, text, good)
    browser.find_element(By.ID, "rules-save").click()
    wait(browser, 3).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".toast.ok"))
    request = urllib.request.Request(f"http://{server}/.settings/rules.json?ns={namespace}", headers={"Authorization": "Bearer owner"})
    with urllib.request.urlopen(request) as response:
        assert response.read().decode() == good
    # The simulator: allowed as alice, by the .read rule on /users/$uid; denied as mallory.
    path = browser.find_element(By.ID, "sim-path")
    path.clear()
    path.send_keys("/users/alice")
    browser.find_element(By.CSS_SELECTOR, "#sim-form button[type=submit]").click()
    verdict = wait(browser, 3).until(lambda d: d.find_element(By.CSS_SELECTOR, "#sim-result .verdict"))
    assert "ALLOWED" in verdict.text
    assert "auth != null && auth.uid == $uid" in browser.find_element(By.CSS_SELECTOR, "#sim-result .decider").text
    auth = browser.find_element(By.ID, "sim-auth")
    auth.clear()
    auth.send_keys('{"uid": "mallory"}')
    browser.find_element(By.CSS_SELECTOR, "#sim-form button[type=submit]").click()
    wait(browser, 3).until(lambda d: "DENIED" in d.find_element(By.CSS_SELECTOR, "#sim-result .verdict").text)
    # A rule that does not load is refused, and the editor shows it at its line.
    browser.execute_script(set_text, text, good.replace("auth != null && auth.uid == $uid", "auth.uid == $uid &&"))
    browser.find_element(By.ID, "rules-save").click()
    banner = wait(browser, 3).until(lambda d: d.find_element(By.CSS_SELECTOR, "#rules-error:not([hidden])"))
    assert "line 5" in banner.text
    assert browser.find_element(By.CSS_SELECTOR, "#rules-gutter .bad").text == "5"
    with urllib.request.urlopen(request) as response:
        assert response.read().decode() == good
    wait(browser, 6).until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".toast"))
    browser.save_screenshot(str(shots / "console-rules.png"))
    assert severe_logs(browser, expected=["/.settings/rules.json?ns=console-rules-"]) == []


def test_rules_coverage_shows_what_requests_evaluated(browser, server, shots):
    """The Rules view's Coverage panel: the totals the server recorded (emulator mode records
    them), each expression never evaluated, which selects its text in the editor, the report's
    link, and Reset."""
    namespace = f"console-coverage-{RUN}"
    rules = '{\n  "rules": {\n    "users": {\n      "$uid": {\n        ".read": "auth != null && auth.uid == $uid",\n        ".write": false\n      }\n    }\n  }\n}'
    request = urllib.request.Request(
        f"http://{server}/.settings/rules.json?ns={namespace}", data=rules.encode(), method="PUT", headers={"Authorization": "Bearer owner"})
    urllib.request.urlopen(request).close()
    # A signed-out read: `auth != null` is false and `&&` stops there.
    with pytest.raises(urllib.error.HTTPError) as denied:
        urllib.request.urlopen(f"http://{server}/users/alice.json?ns={namespace}")
    assert denied.value.code == 401
    open_console(browser, server, namespace)
    browser.find_element(By.ID, "tab-rules").click()
    text = browser.find_element(By.ID, "rules-text")
    wait(browser, 3).until(lambda d: ".read" in text.get_attribute("value"))
    browser.find_element(By.ID, "rules-coverage-show").click()
    summary = browser.find_element(By.ID, "coverage-summary")
    wait(browser, 3).until(lambda d: "expressions evaluated" in summary.text)
    assert summary.text.startswith("4 of 9 expressions evaluated (44.44%)")
    items = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#coverage-list li")]
    assert "5:35 rules/users/$uid/.read auth.uid == $uid never evaluated" in items
    assert "6:19 rules/users/$uid/.write false never evaluated" in items
    assert "5:19 rules/users/$uid/.read auth != null && auth.uid == $uid only false" in items
    browser.find_element(By.XPATH, "//ol[@id='coverage-list']/li[starts-with(., '5:35')]/button").click()
    selected = browser.execute_script("const t = document.getElementById('rules-text'); return t.value.slice(t.selectionStart, t.selectionEnd)")
    assert selected == "auth.uid == $uid"
    link = browser.find_element(By.ID, "coverage-open")
    assert link.is_displayed() and f"/.inspect/coverage?ns={namespace}" in link.get_attribute("href")
    browser.save_screenshot(str(shots / "console-coverage.png"))
    assert severe_logs(browser) == []
    # The report the link opens: the rules with each expression highlighted, no script.
    browser.get(link.get_attribute("href"))
    assert browser.title == f"Rules coverage: {namespace}"
    assert len(browser.find_elements(By.CSS_SELECTOR, "pre.src .e.miss")) == 5  # the right operand, its three parts, and false
    assert browser.find_element(By.CSS_SELECTOR, "pre.src .e.part").get_attribute("title").startswith("auth != null && auth.uid == $uid")
    browser.save_screenshot(str(shots / "rules-coverage-report.png"))
    assert severe_logs(browser) == []
    # Reset: nothing evaluated any more.
    open_console(browser, server, namespace)
    browser.find_element(By.ID, "tab-rules").click()
    browser.find_element(By.ID, "rules-coverage-show").click()
    browser.find_element(By.ID, "coverage-reset").click()
    summary = browser.find_element(By.ID, "coverage-summary")
    wait(browser, 3).until(lambda d: summary.text.startswith("0 of 9 expressions evaluated"))
    assert severe_logs(browser) == []


def test_activity_sums_prometheus_samples(browser, server):
    open_console(browser, server, f"console-{RUN}")
    text = "\n".join([
        "# HELP kindling_connections_open Open connections.",
        "# TYPE kindling_connections_open gauge",
        'kindling_connections_open{transport="websocket"} 3.0',
        'kindling_connections_open{transport="sse"} 2.0',
        'kindling_connections_opened_total{transport="sse"} 40',
        "kindling_listens_active 7",
    ])
    sample = "return import('/.console/activity.js').then((m) => [m.sample(arguments[0], 'kindling_connections_open'), m.sample(arguments[0], 'kindling_listens_active'), m.sample(arguments[0], 'kindling_writes_committed_total')])"
    assert browser.execute_script(sample, text) == [5, 7, None]


def test_history_shows_a_node_as_it_was_and_restores_it(browser, server):
    if os.environ.get("KINDLING_CLUSTER") == "1":
        pytest.skip("cluster mode keeps no history yet")
    namespace = f"history-{RUN}"
    rest(server, namespace, "keep", "PUT", 1)
    for body in ({"text": "first"}, {"text": "second"}):
        time.sleep(0.01)  # a millisecond of its own for each write, so each version has an instant
        rest(server, namespace, "notes/a", "PUT", body)
    time.sleep(0.01)
    rest(server, namespace, "notes", "DELETE")  # the mistake
    open_console(browser, server, namespace)
    row(browser).find_element(By.CSS_SELECTOR, ".key").click()
    browser.find_element(By.ID, "act-history").click()
    status = browser.find_element(By.ID, "history-status")
    wait(browser, 5).until(lambda d: "4 of 4" in status.text)
    assert "remove /notes" in status.text
    browser.execute_script("const s = document.getElementById('history-slider'); s.value = '2'; s.dispatchEvent(new Event('input'));")
    wait(browser, 5).until(lambda d: '"second"' in d.find_element(By.ID, "history-value").text)
    assert "3 of 4" in status.text and "set /notes/a" in status.text
    browser.find_element(By.ID, "history-restore").click()
    dialog = wait(browser, 3).until(lambda d: d.find_element(By.CSS_SELECTOR, "#dialog[open]"))
    assert "Restore" in dialog.find_element(By.ID, "dialog-ok").text
    browser.find_element(By.ID, "dialog-ok").click()
    wait(browser, 5).until(lambda d: rest(server, namespace, "notes/a") == {"text": "second"})
    # The restore is itself a version: the list grows by one.
    wait(browser, 5).until(lambda d: "5 of 5" in status.text)
    assert not severe_logs(browser)


def test_keyboard_reaches_every_control(browser, server):
    namespace = f"console-keys-{RUN}"
    rest(server, namespace, "/", "PUT", {"motd": "hi", "users": {"alice": {"age": 31}, "bob": {"age": 27}}})
    open_console(browser, server, namespace)
    # The tree by arrows alone: down to users, open it, into its first child.
    tree_item = browser.switch_to.active_element
    assert tree_item.get_attribute("role") == "treeitem"
    tree_item.send_keys(Keys.ARROW_DOWN)
    wait(browser, 3).until(lambda d: d.switch_to.active_element.get_attribute("aria-label") is not None
                                    and d.switch_to.active_element.get_attribute("aria-level") == "2")
    while not browser.switch_to.active_element.get_attribute("aria-label").startswith("users"):
        browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    wait(browser, 3).until(lambda d: row(d, "users", "alice"))
    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    assert browser.switch_to.active_element.get_attribute("aria-level") == "3"

    def reached(tab_id):
        """Every focusable control met by Tab from the top of the page with this tab shown."""
        browser.find_element(By.ID, tab_id).click()
        browser.find_element(By.TAG_NAME, "body").click()
        browser.execute_script("document.activeElement.blur(); window.getSelection().removeAllRanges()")
        seen = []
        body = browser.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        for _ in range(80):
            element = browser.switch_to.active_element
            name = "treeitem" if element.get_attribute("role") == "treeitem" else (
                element.get_attribute("id") or element.get_attribute("aria-label") or element.text)
            if seen and name == seen[0]:
                break
            seen.append(name)
            element.send_keys(Keys.TAB)
        return seen

    expected = {
        "tab-data": ["Skip to content", "namespace", "tab-data", "treeitem", "act-edit", "act-add", "act-delete", "act-import", "act-export", "act-query"],
        "tab-query": ["q-path", "q-order", "q-startAt", "q-startAfter", "q-endAt", "q-endBefore", "q-equalTo", "q-first", "q-last", "Run live", "q-stop", "copy-rest", "copy-sdk"],
        "tab-rules": ["rules-coverage-show", "rules-reload", "rules-save", "rules-text", "sim-path", "sim-auth", "sim-data", "sim-draft", "Run"],
    }
    for tab_id, controls in expected.items():
        seen = reached(tab_id)
        missing = [control for control in controls if control not in seen]
        assert missing == [], f"{tab_id}: not reachable by Tab: {missing} (reached {seen})"
    # The tabs themselves are arrow-key navigable, as a tablist.
    browser.find_element(By.ID, "tab-data").click()
    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    assert browser.switch_to.active_element.get_attribute("id") == "tab-query"
    assert browser.find_element(By.ID, "view-query").is_displayed()
    browser.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
    assert severe_logs(browser) == []


@pytest.fixture
def secured_server():
    """A server with an admin secret: no emulator mode, so the console asks for the credential."""
    binary = os.environ.get("KINDLING_BIN", str(ROOT / ".build" / "debug" / "kindling"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--in-memory", "--admin-secret", "console-admin-secret-1234", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert process.poll() is None and time.time() < deadline, "kindling serve did not start"
            time.sleep(0.05)
    yield f"127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=10)


def test_outside_emulator_mode_it_asks_for_the_admin_credential(browser, secured_server):
    def put(path, value, secret="console-admin-secret-1234"):
        request = urllib.request.Request(f"http://{secured_server}/{path}.json", data=json.dumps(value).encode(), method="PUT",
                                         headers={"Authorization": f"Bearer {secret}"})
        urllib.request.urlopen(request).close()

    put("inventory", {"apples": 3, "pears": 5})
    browser.get(f"http://{secured_server}/.console")
    wait(browser, 5).until(lambda d: d.find_element(By.CSS_SELECTOR, "#login[open]"))
    secret = browser.find_element(By.ID, "login-secret")
    secret.send_keys("owner", Keys.ENTER)
    wait(browser, 3).until(lambda d: d.find_element(By.ID, "login-error").text)
    secret.clear()
    secret.send_keys("console-admin-secret-1234", Keys.ENTER)
    wait(browser, 5).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert browser.execute_script("return sessionStorage.getItem('kindling.console.credential')") == "console-admin-secret-1234"
    assert browser.execute_script("return localStorage.length") == 0
    assert browser.find_element(By.ID, "sign-out").is_displayed()
    expand(browser, "inventory")
    assert row(browser, "inventory", "pears").get_attribute("aria-label") == "pears: 5"
    # The event stream carries the credential too (EventSource cannot send headers).
    put("inventory/pears", 4)
    wait(browser, 1).until(lambda d: row(d, "inventory", "pears").get_attribute("aria-label") == "pears: 4")
    browser.find_element(By.ID, "sign-out").click()
    wait(browser, 5).until(lambda d: d.find_element(By.CSS_SELECTOR, "#login[open]"))
    assert browser.execute_script("return sessionStorage.length") == 0
    # Only the refused sign-in is in the console's log.
    assert severe_logs(browser, expected=["/.inspect/databases.json"]) == []


def test_activity_reads_the_metrics_or_says_they_are_unavailable(browser, server):
    open_console(browser, server, f"console-{RUN}")
    browser.find_element(By.ID, "tab-activity").click()
    status = wait(browser, 5).until(lambda d: d.find_element(By.ID, "metrics-status").text)
    if status.startswith("Metrics unavailable"):
        assert browser.find_element(By.ID, "m-connections").text == "–"
    else:
        # The console's own event stream is an open connection.
        wait(browser, 5).until(lambda d: d.find_element(By.ID, "m-connections").text not in ("–", "0", "n/a"))
    browser.find_element(By.ID, "tab-data").click()
