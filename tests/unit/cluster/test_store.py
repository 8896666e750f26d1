"""The per-kind store fed by watch events.

Covers: add, update and delete events (and kopf's None type for the initial listing); an event
with an unchanged resourceVersion is a no-op; a deletion of an unseen object is still reported;
an unparsable object keeps its last good version; indexes follow every change, including values
that move and values shared by several objects; `Change.objects` for event mappers; a store
with `keep` parses the whole object and keeps only what `keep` returns of it; one with
`reparse` takes the previous parsed object over when the raw spec is unchanged, and parses anew
otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from dra_operator import errors
from dra_operator.cluster import (
    DELETED,
    JOURNAL_LENGTH,
    Change,
    ObjectKey,
    RecentlyDeleted,
    Store,
    metadata_and_spec,
    metadata_only,
    without_managed_fields,
)


@dataclass(frozen=True)
class Thing:
    name: str
    colors: tuple[str, ...]


def parse(raw: Mapping[str, Any]) -> Thing:
    colors = raw.get("spec", {}).get("colors", [])
    if not isinstance(colors, list):
        raise errors.InvalidObjectError("spec.colors", "must be a list")
    return Thing(raw["metadata"]["name"], tuple(colors))


def raw(name: str, rv: str, *colors: Any, ns: str = "ns") -> dict[str, Any]:
    spec_colors: Any = list(colors) if colors != ("bad",) else "bad"
    return {
        "metadata": {"namespace": ns, "name": name, "resourceVersion": rv},
        "spec": {"colors": spec_colors},
    }


def store() -> Store[Thing]:
    return Store("things", parse, {"color": lambda thing: thing.colors})


def colored(s: Store[Thing], color: str) -> list[str]:
    return [entry.key.name for entry in s.by_index("color", color)]


@pytest.mark.parametrize("event_type", [None, "ADDED", "MODIFIED"])
def test_every_non_delete_event_adds_the_object(event_type: str | None) -> None:
    s = store()
    body = raw("a", "1", "red")
    change = s.apply(event_type, body)
    assert change is not None
    assert change.old is None
    entry = s.get(ObjectKey("ns", "a"))
    assert entry is not None
    assert (entry.obj, entry.raw, entry.resource_version) == (Thing("a", ("red",)), body, "1")
    assert change.new == entry


def test_update_replaces_and_reindexes() -> None:
    s = store()
    s.apply("ADDED", raw("a", "1", "red", "blue"))
    s.apply("ADDED", raw("b", "1", "red"))
    change = s.apply("MODIFIED", raw("a", "2", "green"))
    assert change is not None and change.old is not None and change.new is not None
    assert (change.old.obj.colors, change.new.obj.colors) == (("red", "blue"), ("green",))
    assert colored(s, "red") == ["b"]
    assert colored(s, "blue") == []
    assert colored(s, "green") == ["a"]
    assert sorted(map(str, s.index_values("color"))) == ["green", "red"]


def test_same_resource_version_is_a_no_op() -> None:
    s = store()
    s.apply(None, raw("a", "1", "red"))
    assert s.apply("MODIFIED", raw("a", "1", "red")) is None


def test_delete_removes_from_store_and_indexes() -> None:
    s = store()
    s.apply("ADDED", raw("a", "1", "red"))
    change = s.apply(DELETED, raw("a", "2", "red"))
    assert change is not None and change.new is None and change.old is not None
    assert change.old.resource_version == "1"  # what we knew, not the tombstone
    assert s.get(ObjectKey("ns", "a")) is None
    assert len(s) == 0
    assert colored(s, "red") == []
    assert s.index_values("color") == []


def test_delete_of_an_unseen_object_is_reported_from_the_event() -> None:
    s = store()
    change = s.apply(DELETED, raw("ghost", "5", "red"))
    assert change is not None and change.new is None and change.old is not None
    assert change.old.obj == Thing("ghost", ("red",))
    assert len(s) == 0


def test_an_unparsable_update_keeps_the_last_good_version() -> None:
    s = store()
    s.apply("ADDED", raw("a", "1", "red"))
    with pytest.raises(errors.InvalidObjectError, match=r"spec\.colors: must be a list"):
        s.apply("MODIFIED", raw("a", "2", "bad"))
    entry = s.get(ObjectKey("ns", "a"))
    assert entry is not None and entry.resource_version == "1"
    assert colored(s, "red") == ["a"]


def test_index_lookups_are_sorted_by_key() -> None:
    s = store()
    for name in ("c", "a", "b"):
        s.apply("ADDED", raw(name, "1", "red", ns="z" if name == "a" else "ns"))
    assert [str(e.key) for e in s.by_index("color", "red")] == ["ns/b", "ns/c", "z/a"]
    assert sorted(e.key.name for e in s) == ["a", "b", "c"]


def test_cluster_scoped_keys_print_without_namespace() -> None:
    assert str(ObjectKey("", "node-1")) == "node-1"
    assert str(ObjectKey("ns", "pod")) == "ns/pod"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param("red", None, ["red"], id="deleted"),
        pytest.param(None, "red", ["red"], id="added"),
        pytest.param("red", "blue", ["red", "blue"], id="moved"),
    ],
)
def test_change_objects_are_what_mappers_run_on(
    old: str | None, new: str | None, expected: list[str]
) -> None:
    s = store()
    if old is not None:
        s.apply("ADDED", raw("a", "1", old))
    if new is not None:
        change = s.apply("MODIFIED", raw("a", "2", new))
    else:
        change = s.apply(DELETED, raw("a", "2", "red"))
    assert isinstance(change, Change)
    assert [thing.colors[0] for thing in change.objects()] == expected
    assert change.key == ObjectKey("ns", "a")


def test_change_objects_drop_an_unchanged_duplicate() -> None:
    s = store()
    s.apply("ADDED", raw("a", "1", "red"))
    change = s.apply("MODIFIED", raw("a", "2", "red"))  # e.g. only the status changed
    assert change is not None
    assert change.objects() == [Thing("a", ("red",))]


def test_an_assumed_write_hides_older_watch_events_until_the_watch_catches_up() -> None:
    s = store()
    s.apply("ADDED", raw("a", "5", "red"))
    s.assume(raw("a", "7", "blue"))
    assert s.apply("MODIFIED", raw("a", "6", "green")) is None  # an older event, late
    entry = s.get(ObjectKey("ns", "a"))
    assert entry is not None and entry.obj.colors == ("blue",)
    change = s.apply("MODIFIED", raw("a", "8", "black"))
    assert change is not None
    assert s.apply("MODIFIED", raw("a", "9", "white")) is not None


def test_assuming_a_version_the_watch_already_passed_changes_nothing() -> None:
    s = store()
    s.apply("ADDED", raw("a", "9", "red"))
    assert s.assume(raw("a", "7", "blue")) is None
    assert colored(s, "red") == ["a"]


def test_an_assumed_new_object_is_visible_at_once() -> None:
    s = store()
    change = s.assume(raw("created", "3", "red"))
    assert change is not None and change.old is None
    assert colored(s, "red") == ["created"]


def test_assumed_changes_reach_the_hooks_and_the_later_watch_event_changes_nothing() -> None:
    s = store()
    seen: list[Change[Thing]] = []
    s.assumed_hooks.append(seen.append)
    s.apply("ADDED", raw("a", "5", "red"))
    s.assume(raw("a", "7", "blue"))
    s.assume(raw("a", "6", "green"))  # older than what the store holds: no change, no hook
    assert [(c.old and c.old.obj, c.new and c.new.obj) for c in seen] == [
        (Thing("a", ("red",)), Thing("a", ("blue",)))
    ]
    assert s.apply("MODIFIED", raw("a", "7", "blue")) is None


def test_recently_deleted_forgets_the_oldest_first() -> None:
    deleted = RecentlyDeleted(capacity=2)
    for uid in ("a", "b", "a", "c"):
        deleted.add(uid)
    assert ("a" in deleted, "b" in deleted, "c" in deleted) == (True, False, True)
    assert len(deleted) == 2


def test_changes_since_replays_what_changed_after_a_revision() -> None:
    store = Store("things", parse, journal=JOURNAL_LENGTH)
    start = store.revision
    store.apply("ADDED", raw("a", "1", "red"))
    middle = store.revision
    store.apply("MODIFIED", raw("a", "1", "red"))  # same version: nothing changed
    store.apply("MODIFIED", raw("a", "2", "blue"))
    store.apply(DELETED, raw("a", "3"))
    assert store.changes_since(store.revision) == ()
    changes = store.changes_since(middle)
    assert changes is not None
    assert [(c.old is None, c.new is None) for c in changes] == [(False, False), (False, True)]
    assert len(store.changes_since(start) or ()) == 3


def test_changes_since_a_revision_the_journal_dropped_is_unknown() -> None:
    store = Store("things", parse, journal=JOURNAL_LENGTH)
    for version in range(1, JOURNAL_LENGTH + 2):
        store.apply("MODIFIED", raw("a", str(version)))
    assert store.changes_since(0) is None
    assert len(store.changes_since(1) or ()) == JOURNAL_LENGTH


def test_a_store_without_a_journal_names_no_past_changes() -> None:
    store = Store("things", parse)
    store.apply("ADDED", raw("a", "1"))
    assert store.revision == 1
    assert store.changes_since(1) == ()
    assert store.changes_since(0) is None


MANAGED = [{"manager": "m", "operation": "Update", "fieldsV1": {"f:spec": {}}}]


@pytest.mark.parametrize("keep", [without_managed_fields, metadata_only])
def test_a_store_keeps_what_keep_returns_and_parses_the_whole_object(keep: Any) -> None:
    s = Store("things", parse, {"color": lambda thing: thing.colors}, keep=keep)
    full = raw("a", "1", "red")
    full["metadata"]["managedFields"] = MANAGED

    change = s.apply("ADDED", full)
    gone = s.apply(DELETED, raw("b", "2", "blue") | {"metadata": full["metadata"] | {"name": "b"}})

    assert change is not None and change.new is not None and gone is not None
    assert change.new.obj == Thing("a", ("red",)) and colored(s, "red") == ["a"]
    kept = change.new.raw
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["resourceVersion"] == "1"
    assert ("spec" in kept) is (keep is without_managed_fields)
    assert "managedFields" in full["metadata"]  # the event's own dict is left as it was
    assert gone.old is not None and "managedFields" not in gone.old.raw["metadata"]


def test_without_managed_fields_returns_an_object_without_them_unchanged() -> None:
    plain = raw("a", "1")
    assert without_managed_fields(plain) is plain


def test_reparse_takes_the_previous_object_over_only_while_the_spec_is_unchanged() -> None:
    reparsed: list[Thing] = []

    def reparse(raw: Mapping[str, Any], old: Thing) -> Thing:
        reparsed.append(old)
        return Thing(raw["metadata"]["name"], old.colors)

    s = Store(
        "things",
        parse,
        {"color": lambda thing: thing.colors},
        keep=metadata_and_spec,
        reparse=reparse,
    )
    s.apply("ADDED", raw("a", "1", "red"))
    labelled = raw("a", "2", "red")
    labelled["metadata"]["labels"] = {"x": "y"}
    s.apply("MODIFIED", labelled)
    assert [thing.colors for thing in reparsed] == [("red",)]
    s.apply("MODIFIED", raw("a", "3", "blue"))
    assert len(reparsed) == 1 and colored(s, "blue") == ["a"] and colored(s, "red") == []
