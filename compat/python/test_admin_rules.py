"""Security rules seen through firebase-admin: as the admin, as a user through
`databaseAuthVariableOverride`, and as an unauthenticated user (override None).

The rules are set for this file's own namespace through `PUT /.settings/rules.json`, as
firebase-tools deploys them to the emulator.
"""
import urllib.request
import uuid

import pytest
from firebase_admin import db, exceptions

# A namespace of this run's own: the server's data directory outlives the run.
NAMESPACE = "rules-" + uuid.uuid4().hex[:12]

RULES = """{
  // The seed apps' rules, trimmed.
  "rules": {
    "activities": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth != null && auth.uid === $uid"
      }
    },
    "spots": {
      "$spot": {
        ".read": true,
        "free": {
          ".write": "auth != null",
          ".validate": "newData.isNumber() && newData.val() >= 0 && newData.val() <= root.child('spots').child($spot).child('seats').val()"
        }
      }
    },
    "slots": {
      "$slot": {
        ".read": true,
        ".write": "auth != null && (!data.exists() || (!newData.exists() && data.val() === auth.uid))",
        ".validate": "newData.val() === auth.uid"
      }
    },
    "chats": {
      ".read": "auth != null && query.orderByChild === 'to' && query.equalTo === auth.uid",
      "$message": { ".write": "auth != null && !data.exists() && newData.child('from').val() === auth.uid" }
    }
  }
}"""


@pytest.fixture(scope="module")
def rules(server):
    request = urllib.request.Request(
        f"http://{server}/.settings/rules.json?ns={NAMESPACE}",
        data=RULES.encode(),
        method="PUT",
        headers={"Authorization": "Bearer owner"},
    )
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
    with urllib.request.urlopen(
        urllib.request.Request(f"http://{server}/.settings/rules.json?ns={NAMESPACE}", headers={"Authorization": "Bearer owner"})
    ) as response:
        assert response.read().decode() == RULES


def _app(server, name, override):
    import firebase_admin
    from firebase_admin import credentials

    class _Anonymous(credentials.Base):
        def get_credential(self):
            return None

    options = {"databaseURL": f"https://{NAMESPACE}.firebaseio.com", "projectId": "kindling-test"}
    if override != "admin":
        options["databaseAuthVariableOverride"] = override
    return firebase_admin.initialize_app(_Anonymous(), options, name=name)


@pytest.fixture(scope="module")
def apps(server, rules):
    import os

    import firebase_admin

    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = server

    made = {
        "admin": _app(server, "rules-admin", "admin"),
        "alice": _app(server, "rules-alice", {"uid": "alice"}),
        "bob": _app(server, "rules-bob", {"uid": "bob"}),
        "nobody": _app(server, "rules-nobody", None),
    }
    yield made
    for app in made.values():
        firebase_admin.delete_app(app)


def test_admin_bypasses_rules(apps):
    db.reference("activities/zed/a", app=apps["admin"]).set(1)
    assert db.reference("activities/zed/a", app=apps["admin"]).get() == 1


def test_users_write_and_read_only_their_own(apps):
    db.reference("activities/alice/swim", app=apps["alice"]).set({"at": 9})
    assert db.reference("activities/alice", app=apps["alice"]).get() == {"swim": {"at": 9}}
    with pytest.raises(exceptions.UnauthenticatedError) as denied:
        db.reference("activities/alice/run", app=apps["bob"]).set({"at": 10})
    assert "Permission denied" in str(denied.value)
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("activities/alice", app=apps["bob"]).get()
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("activities/alice", app=apps["nobody"]).get()
    # Rules are not filters: nothing grants at /activities itself.
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("activities", app=apps["alice"]).get()


def test_a_denied_multi_path_update_writes_nothing(apps):
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("activities", app=apps["bob"]).update({"bob/x": 1, "alice/x": 1})
    assert db.reference("activities/bob", app=apps["admin"]).get() is None


def test_seat_counts_stay_between_zero_and_the_seats(apps):
    db.reference("spots/gym", app=apps["admin"]).set({"seats": 3, "free": 3})
    free = db.reference("spots/gym/free", app=apps["alice"])
    assert free.transaction(lambda current: current - 1) == 2
    with pytest.raises(exceptions.UnauthenticatedError):
        free.set(4)
    with pytest.raises(exceptions.UnauthenticatedError):
        free.set(-1)
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("spots/gym/free", app=apps["nobody"]).set(1)
    assert db.reference("spots/gym", app=apps["nobody"]).get() == {"seats": 3, "free": 2}


def test_a_slot_is_booked_only_while_free(apps):
    db.reference("slots/tue10", app=apps["alice"]).set("alice")
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("slots/tue10", app=apps["bob"]).set("bob")
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("slots/tue10", app=apps["bob"]).delete()
    db.reference("slots/tue10", app=apps["alice"]).delete()
    db.reference("slots/tue10", app=apps["bob"]).set("bob")
    assert db.reference("slots/tue10", app=apps["nobody"]).get() == "bob"


def test_chat_messages_are_read_through_a_query_for_ones_own(apps):
    db.reference("chats/m1", app=apps["alice"]).set({"from": "alice", "to": "bob", "text": "dive at 9?"})
    db.reference("chats/m2", app=apps["bob"]).set({"from": "bob", "to": "alice", "text": "yes"})
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("chats/m3", app=apps["alice"]).set({"from": "bob", "to": "alice"})
    mine = db.reference("chats", app=apps["bob"]).order_by_child("to").equal_to("bob").get()
    assert list(mine.keys()) == ["m1"]
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("chats", app=apps["bob"]).order_by_child("to").equal_to("alice").get()
    with pytest.raises(exceptions.UnauthenticatedError):
        db.reference("chats", app=apps["bob"]).get()
