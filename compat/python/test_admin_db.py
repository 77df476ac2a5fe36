"""firebase_admin.db against a real Kindling server: every call a client makes."""
import collections
import queue
import threading

import pytest
from firebase_admin import db, exceptions


def test_set_and_get(ref):
    ref.set({"name": "Ada", "age": 36, "tags": ["a", "b"], "ok": True, "pi": 3.25})
    assert ref.get() == {"name": "Ada", "age": 36, "tags": ["a", "b"], "ok": True, "pi": 3.25}
    assert ref.child("name").get() == "Ada"
    assert ref.child("missing").get() is None


def test_non_ascii_round_trip(ref):
    ref.set({"hé": "✓ héllo 😀"})
    assert ref.get() == {"hé": "✓ héllo 😀"}


def test_update_multi_path_and_delete_with_none(ref):
    ref.set({"a": {"x": 1, "y": 2}, "b": 1, "temp": "gone soon"})
    ref.update({"a/x": 10, "b": {"deep": True}, "temp": None})
    assert ref.get() == {"a": {"x": 10, "y": 2}, "b": {"deep": True}}


def test_push_returns_a_child_holding_the_value(ref):
    first = ref.push({"text": "Ahoy!"})
    second = ref.push()
    assert len(first.key) == 20 and first.key < second.key
    assert first.get() == {"text": "Ahoy!"}
    assert second.get() == ""
    assert list(ref.get().keys()) == [first.key, second.key]


def test_delete(ref):
    ref.set({"a": 1, "b": 2})
    ref.child("a").delete()
    assert ref.get() == {"b": 2}
    ref.delete()
    assert ref.get() is None
    ref.child("never/was").delete()


def test_shallow_get(ref):
    ref.set({"a": {"deep": 1}, "b": {"c": 2}, "leaf": "x"})
    assert ref.get(shallow=True) == {"a": True, "b": True, "leaf": True}
    assert ref.child("leaf").get(shallow=True) == "x"


def test_server_values(ref):
    ref.set({"count": 5})
    ref.update({"count": {".sv": {"increment": 2}}, "at": {".sv": "timestamp"}})
    data = ref.get()
    assert data["count"] == 7
    assert isinstance(data["at"], int) and data["at"] > 1_600_000_000_000


def test_get_with_etag(ref):
    ref.set({"v": 1})
    value, etag = ref.get(etag=True)
    assert value == {"v": 1} and etag
    again, same = ref.get(etag=True)
    assert same == etag
    ref.child("v").set(2)
    _, changed = ref.get(etag=True)
    assert changed != etag
    missing, null_tag = ref.child("nothing").get(etag=True)
    assert missing is None and null_tag == "null_etag"


def test_get_if_changed(ref):
    ref.set("first")
    _, etag = ref.get(etag=True)
    assert ref.get_if_changed(etag) == (False, None, None)
    ref.set("second")
    changed, value, new_etag = ref.get_if_changed(etag)
    assert changed is True and value == "second" and new_etag not in (None, etag)


def test_set_if_unchanged(ref):
    ref.set({"n": 1})
    _, etag = ref.get(etag=True)
    ok, value, new_etag = ref.set_if_unchanged(etag, {"n": 2})
    assert ok is True and value == {"n": 2} and new_etag and new_etag != etag
    ok, current, current_etag = ref.set_if_unchanged(etag, {"n": 3})
    assert ok is False and current == {"n": 2} and current_etag == new_etag
    assert ref.get() == {"n": 2}


def test_set_if_unchanged_on_a_missing_node(ref):
    child = ref.child("fresh")
    ok, value, _ = child.set_if_unchanged("null_etag", "created")
    assert ok and value == "created"
    ok, current, _ = child.set_if_unchanged("null_etag", "again")
    assert not ok and current == "created"


def test_transaction_from_eight_threads(ref):
    counter = ref.child("counter")
    counter.set(0)
    errors = []

    def work():
        for _ in range(25):
            for _attempt in range(10):
                try:
                    counter.transaction(lambda current: (current or 0) + 1)
                    break
                except db.TransactionAbortedError:
                    continue
            else:
                errors.append("aborted 10 times")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert counter.get() == 200


def test_transaction_returns_the_new_value(ref):
    ref.set({"count": 41})
    assert ref.child("count").transaction(lambda n: n + 1) == 42


def test_invalid_key_is_an_invalid_argument_error(ref):
    with pytest.raises(exceptions.InvalidArgumentError):
        ref.set({"bad.key": 1})
    assert ref.get() is None


DINOSAURS = {
    "bruhathkayosaurus": {"appeared": -70000000, "height": 25, "length": 44, "order": "saurischia",
                          "vanished": -70000000, "weight": 135000, "ratings": {"pos": 1}},
    "lambeosaurus": {"appeared": -76000000, "height": 2.1, "length": 12.5, "order": "ornithischia",
                     "vanished": -75000000, "weight": 5000, "ratings": {"pos": 2}},
    "linhenykus": {"appeared": -85000000, "height": 0.6, "length": 1, "order": "theropoda",
                   "vanished": -75000000, "weight": 3, "ratings": {"pos": 3}},
    "pterodactyl": {"appeared": -150000000, "height": 0.6, "length": 0.8, "order": "pterosauria",
                    "vanished": -148500000, "weight": 2, "ratings": {"pos": 4}},
    "stegosaurus": {"appeared": -155000000, "height": 4, "length": 9, "order": "ornithischia",
                    "vanished": -150000000, "weight": 2500, "ratings": {"pos": 5}},
    "triceratops": {"appeared": -68000000, "height": 3, "length": 8, "order": "ornithischia",
                    "vanished": -66000000, "weight": 11000, "ratings": {"pos": 6}},
}
SCORES = {"bruhathkayosaurus": 55, "lambeosaurus": 21, "linhenykus": 80, "pterodactyl": 93,
          "stegosaurus": 5, "triceratops": 22}


@pytest.fixture
def dinos(ref):
    ref.set({"dinosaurs": DINOSAURS, "scores": SCORES})
    return ref


def test_order_by_child_limit_to_first(dinos):
    result = dinos.child("dinosaurs").order_by_child("height").limit_to_first(2).get()
    assert list(result.keys()) == ["linhenykus", "pterodactyl"]


def test_order_by_child_limit_to_last(dinos):
    result = dinos.child("dinosaurs").order_by_child("height").limit_to_last(2).get()
    assert list(result.keys()) == ["stegosaurus", "bruhathkayosaurus"]


def test_order_by_child_range(dinos):
    result = dinos.child("dinosaurs").order_by_child("height").start_at(2.5).end_at(5).get()
    assert list(result.keys()) == ["triceratops", "stegosaurus"]


def test_order_by_child_equal_to(dinos):
    result = dinos.child("dinosaurs").order_by_child("height").equal_to(0.6).get()
    assert list(result.keys()) == ["linhenykus", "pterodactyl"]


def test_order_by_child_string_equal_to(dinos):
    result = dinos.child("dinosaurs").order_by_child("order").equal_to("ornithischia").get()
    assert sorted(result.keys()) == ["lambeosaurus", "stegosaurus", "triceratops"]


def test_order_by_nested_child(dinos):
    result = dinos.child("dinosaurs").order_by_child("ratings/pos").start_at(4).get()
    assert list(result.keys()) == ["pterodactyl", "stegosaurus", "triceratops"]


def test_order_by_key(dinos):
    dinosaurs = dinos.child("dinosaurs")
    assert list(dinosaurs.order_by_key().limit_to_first(2).get().keys()) == ["bruhathkayosaurus", "lambeosaurus"]
    assert list(dinosaurs.order_by_key().limit_to_last(1).get().keys()) == ["triceratops"]
    assert list(dinosaurs.order_by_key().start_at("m").end_at("t").get().keys()) == ["pterodactyl", "stegosaurus"]
    assert list(dinosaurs.order_by_key().equal_to("linhenykus").get().keys()) == ["linhenykus"]


def test_order_by_value(dinos):
    scores = dinos.child("scores")
    assert scores.order_by_value().limit_to_last(2).get() == collections.OrderedDict(
        [("linhenykus", 80), ("pterodactyl", 93)])
    assert list(scores.order_by_value().limit_to_first(2).get().keys()) == ["stegosaurus", "lambeosaurus"]
    assert list(scores.order_by_value().start_at(50).end_at(90).get().keys()) == ["bruhathkayosaurus", "linhenykus"]
    assert list(scores.order_by_value().equal_to(22).get().keys()) == ["triceratops"]


def test_empty_query_result(dinos):
    assert not dinos.child("dinosaurs").order_by_child("height").start_at(1000).get()


def _listen(reference):
    events = queue.Queue()
    registration = reference.listen(lambda event: events.put((event.event_type, event.path, event.data)))
    return registration, events


def test_listen_put_then_patch_with_non_ascii(ref):
    ref.set({"greeting": "hi"})
    registration, events = _listen(ref)
    try:
        assert events.get(timeout=10) == ("put", "/", {"greeting": "hi"})
        ref.child("greeting").set("héllo ✓")
        assert events.get(timeout=10) == ("put", "/greeting", "héllo ✓")
        ref.update({"greeting": "✓✓", "other": {"ü": 1}})
        assert events.get(timeout=10) == ("patch", "/", {"greeting": "✓✓", "other": {"ü": 1}})
        ref.child("other").delete()
        assert events.get(timeout=10) == ("put", "/other", None)
        pushed = ref.child("list").push("")
        assert events.get(timeout=10) == ("put", f"/list/{pushed.key}", "")
        ref.parent.child(ref.key).set({"replaced": True})
        assert events.get(timeout=10) == ("put", "/", {"replaced": True})
    finally:
        registration.close()


def test_listen_sees_a_multi_path_update_as_one_patch(ref):
    """One event for the whole update (a mirror never holds half of it), at the deepest path
    its entries share, keyed by the paths below it."""
    ref.set({"a": {"x": 0}, "c": 1})
    registration, events = _listen(ref)
    try:
        assert events.get(timeout=10) == ("put", "/", {"a": {"x": 0}, "c": 1})
        ref.update({"a/x": 1, "a/y": 2})
        assert events.get(timeout=10) == ("patch", "/a", {"x": 1, "y": 2})
        ref.update({"a/x": 3, "b/z": 4, "c": None})
        assert events.get(timeout=10) == ("patch", "/", {"a/x": 3, "b/z": 4, "c": None})
        ref.child("marker").set(True)
        assert events.get(timeout=10) == ("put", "/marker", True)
    finally:
        registration.close()


def test_listen_on_a_missing_location_starts_with_null(ref):
    registration, events = _listen(ref.child("empty"))
    try:
        assert events.get(timeout=10) == ("put", "/", None)
        ref.child("empty/a").set(1)
        assert events.get(timeout=10) == ("put", "/a", 1)
    finally:
        registration.close()


def test_listen_close_stops_events(ref):
    registration, events = _listen(ref)
    assert events.get(timeout=10) == ("put", "/", None)
    registration.close()
    ref.set("after close")
    with pytest.raises(queue.Empty):
        events.get(timeout=1)
