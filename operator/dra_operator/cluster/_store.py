"""An in-memory cache of one kind, fed by watch events, with secondary indexes.

The operator's reflector for a kind does nothing but `store.apply(event["type"], event["object"])`
and hands the returned `Change` to the controllers' event-to-key mappers, which run on both the
old and the new object (so a reference that moved still reaches its former target).

Each entry keeps three things: the parsed, immutable model object (what controllers read), the
raw dict (what writes are built from, so fields this version of the operator does not know
survive a full update: rule 1) and its resourceVersion (the write precondition). The raw dict is
shared: nobody may mutate it; writers copy it before editing. A store built with `keep` holds
only what that returns of it: `without_managed_fields` (an update that omits them leaves the
server's as they are, so nothing a write needs is lost), or `metadata_only` for a kind no write
is built from.

A store built with `reparse` hands it the previous parsed object when an event's raw `spec`
equals the one kept from the previous version (so `keep` must keep the spec): only metadata and
status are parsed again, the rest is taken over (pods and claims: their spec is most of the
parse, and most of their events change status or metadata only).

Indexes map a value computed from the parsed object (an index function may return several) to
the keys of the objects that have it; they are updated on every change, so lookups never scan.

`revision` counts the changes; a store built with `journal` keeps the last that many (with the
objects they replaced), so a reader that derives something from it (the scheduler's verdicts
per node, from nodes and slices) can ask what changed since it last looked (`changes_since`)
instead of being called on every event. Busy kinds (pods, claims) keep none: the objects a
journal holds on to would cost memory for nobody.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

T = TypeVar("T")

Parser = Callable[[Mapping[str, Any]], T]
Keep = Callable[[Mapping[str, Any]], Mapping[str, Any]]
Reparse = Callable[[Mapping[str, Any], T], T]
IndexFunc = Callable[[T], Iterable[Hashable]]

JOURNAL_LENGTH = 1024
"""A journal long enough for the changes between two scheduling decisions; a reader further
behind starts over."""

DELETED = "DELETED"
"""The watch event type that removes an object; every other type (ADDED, MODIFIED, and None
for a LIST's objects) adds or replaces it."""


class ObjectKey(NamedTuple):
    """namespace/name; the namespace is "" for cluster-scoped kinds."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> ObjectKey:
        metadata = raw.get("metadata") or {}
        return cls(metadata.get("namespace") or "", metadata.get("name") or "")


@dataclass(frozen=True, slots=True)
class Entry(Generic[T]):
    key: ObjectKey
    obj: T
    raw: Mapping[str, Any]
    resource_version: str


@dataclass(frozen=True, slots=True)
class Change(Generic[T]):
    """What one event did: `old` None for a new object, `new` None for a deleted one."""

    old: Entry[T] | None
    new: Entry[T] | None

    @property
    def key(self) -> ObjectKey:
        entry = self.new or self.old
        assert entry is not None  # a Change always has one side
        return entry.key

    def objects(self) -> list[T]:
        """The old and the new object, without duplicates: what event mappers run on."""
        found = [e.obj for e in (self.old, self.new) if e is not None]
        return found[:1] if len(found) == 2 and found[0] == found[1] else found


class Store(Generic[T]):
    """The objects of one kind by key, with named indexes; see the module docstring."""

    def __init__(
        self,
        kind: str,
        parse: Parser[T],
        indexers: Mapping[str, IndexFunc[T]] | None = None,
        *,
        journal: int = 0,
        keep: Keep | None = None,
        reparse: Reparse[T] | None = None,
    ) -> None:
        self.kind = kind
        self._parse = parse
        self._keep = keep
        self._reparse = reparse
        self._indexers = dict(indexers or {})
        self._entries: dict[ObjectKey, Entry[T]] = {}
        self._indexes: dict[str, dict[Hashable, set[ObjectKey]]] = {
            name: {} for name in self._indexers
        }
        self._indexed: dict[ObjectKey, dict[str, frozenset[Hashable]]] = {}
        self._assumed: dict[ObjectKey, int] = {}
        self.assumed_hooks: list[Callable[[Change[T]], None]] = []
        """Called with every change `assume` makes: our own writes reach the ledger and the
        other controllers as watch events would (the watch event that follows changes nothing)."""
        self.revision = 0
        self._journal: collections.deque[tuple[int, Change[T]]] = collections.deque(maxlen=journal)

    def apply(self, event_type: str | None, raw: Mapping[str, Any]) -> Change[T] | None:
        """Record one watch event; None when it changes nothing (same resourceVersion).

        An object that does not parse raises `errors.InvalidObjectError` and keeps its last
        good version: forgetting an allocated claim would free its devices for someone else.
        A deletion of an object never seen is still reported, parsed from the event.
        """
        key = ObjectKey.of(raw)
        version = str((raw.get("metadata") or {}).get("resourceVersion") or "")
        old = self._entries.get(key)
        if event_type == DELETED:
            self._assumed.pop(key, None)
            if old is None:
                gone = Entry(key, self._parse(raw), self._kept(raw), version)
                return self._record(Change(gone, None))
            self._remove(key)
            return self._record(Change(old, None))
        if old is not None and old.resource_version == version:
            return None
        assumed = self._assumed.get(key)
        if assumed is not None:
            seen = version_number(version)
            if seen is not None and seen < assumed:
                return None  # older than what we wrote ourselves
            del self._assumed[key]
        new = Entry(key, self._parsed(raw, old), self._kept(raw), version)
        if old is not None:
            self._remove(key)
        self._insert(new)
        return self._record(Change(old, new))

    def assume(self, raw: Mapping[str, Any]) -> Change[T] | None:
        """Record an object as our own write returned it, before the watch delivers it.

        Until a watch event at or past its resourceVersion arrives, older watch events for the
        key are ignored (upstream's assume and mutation caches). This is what stops a claim
        from being generated twice when the pod status write after its creation fails and the
        pod is retried before the watch has shown the claim.
        """
        version = version_number(str((raw.get("metadata") or {}).get("resourceVersion") or ""))
        key = ObjectKey.of(raw)
        old = self._entries.get(key)
        if old is not None and version is not None:
            current = version_number(old.resource_version)
            if current is not None and current >= version:
                return None  # the watch was faster
        change = self.apply("MODIFIED", raw)
        if version is not None:
            self._assumed[key] = version
        if change is not None:
            for hook in self.assumed_hooks:
                hook(change)
        return change

    def changes_since(self, revision: int) -> Sequence[Change[T]] | None:
        """The changes after `revision`, oldest first; None when the journal no longer has them."""
        if revision == self.revision:
            return ()
        if not self._journal or self._journal[0][0] > revision + 1:
            return None
        found: list[Change[T]] = []
        for seen, change in reversed(self._journal):
            if seen <= revision:
                break
            found.append(change)
        found.reverse()
        return found

    def get(self, key: ObjectKey) -> Entry[T] | None:
        return self._entries.get(key)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(list(self._entries.values()))

    def by_index(self, index: str, value: Hashable) -> list[Entry[T]]:
        """The entries whose index function returned `value`, sorted by key."""
        keys = self._indexes[index].get(value, ())
        return [self._entries[key] for key in sorted(keys)]

    def index_values(self, index: str) -> list[Hashable]:
        """Every value `index` currently holds (e.g. every pool), in no particular order."""
        return list(self._indexes[index])

    def _parsed(self, raw: Mapping[str, Any], old: Entry[T] | None) -> T:
        if self._reparse is None or old is None:
            return self._parse(raw)
        spec = old.raw.get("spec")
        if spec is None or raw.get("spec") != spec:
            return self._parse(raw)
        return self._reparse(raw, old.obj)

    def _kept(self, raw: Mapping[str, Any]) -> Mapping[str, Any]:
        return raw if self._keep is None else self._keep(raw)

    def _record(self, change: Change[T]) -> Change[T]:
        self.revision += 1
        if self._journal.maxlen:
            self._journal.append((self.revision, change))
        return change

    def _insert(self, entry: Entry[T]) -> None:
        self._entries[entry.key] = entry
        values: dict[str, frozenset[Hashable]] = {}
        for name, func in self._indexers.items():
            values[name] = frozenset(func(entry.obj))
            index = self._indexes[name]
            for value in values[name]:
                index.setdefault(value, set()).add(entry.key)
        self._indexed[entry.key] = values

    def _remove(self, key: ObjectKey) -> None:
        del self._entries[key]
        for name, values in self._indexed.pop(key).items():
            index = self._indexes[name]
            for value in values:
                keys = index[value]
                keys.discard(key)
                if not keys:
                    del index[value]


def without_managed_fields(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """`raw` without `metadata.managedFields` (about half of a small object's JSON)."""
    metadata = raw.get("metadata")
    if not isinstance(metadata, Mapping) or "managedFields" not in metadata:
        return raw
    slim = {k: v for k, v in metadata.items() if k != "managedFields"}
    return {**raw, "metadata": slim}


def metadata_only(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """`raw`'s kind and metadata (without managedFields): a key and a resourceVersion."""
    kept = {k: raw[k] for k in ("apiVersion", "kind") if k in raw}
    kept["metadata"] = without_managed_fields(raw).get("metadata") or {}
    return kept


def metadata_and_spec(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """`metadata_only` and the spec, which `reparse` compares with the next version's."""
    kept = dict(metadata_only(raw))
    if "spec" in raw:
        kept["spec"] = raw["spec"]
    return kept


def version_number(resource_version: object) -> int | None:
    """A resourceVersion as an integer, as upstream's assume cache compares them."""
    try:
        return int(str(resource_version))
    except ValueError:
        return None
