"""/.metrics parsed with prometheus-client's own parser, before and after firebase-admin traffic."""
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def scrape(server):
    with urllib.request.urlopen(f"http://{server}/.metrics", timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    types = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return types, samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_parse_and_count_firebase_admin_traffic(server, ref):
    types, before = scrape(server)
    assert types["kindling_requests"] == "counter"
    assert types["kindling_connections_open"] == "gauge"
    assert types["kindling_log_append_seconds"] == "histogram"

    ref.set({"a": 1})
    ref.update({"b": 2})
    ref.push({"c": 3})
    data = ref.get()
    assert data["a"] == 1 and data["b"] == 2 and len(data) == 3

    _, after = scrape(server)
    writes = value(after, "kindling_writes_committed_total") - value(before, "kindling_writes_committed_total")
    assert writes == 3
    rest_writes = value(after, "kindling_requests_total", action="rest_write", outcome="ok") - value(
        before, "kindling_requests_total", action="rest_write", outcome="ok"
    )
    assert rest_writes == 3
    rest_reads = value(after, "kindling_requests_total", action="rest_read", outcome="ok") - value(
        before, "kindling_requests_total", action="rest_read", outcome="ok"
    )
    assert rest_reads == 1
    assert value(after, "kindling_namespaces") >= 1


def test_health_and_readiness(server):
    for path in ("/.health", "/.ready"):
        with urllib.request.urlopen(f"http://{server}{path}", timeout=10) as response:
            assert response.status == 200
            assert response.read() == b'{"status":"ok"}'
