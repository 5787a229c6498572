"""Kinds, per-resource object storage, and limit/continue paging.

Each object is stored as its orjson encoding (without ``apiVersion``/``kind``: list items on the real
server omit them) plus its labels and selectable field values, all in one plain tuple. Why bytes and
not dicts: 50,000 stored pods as dicts are ~5 million GC-tracked containers, and CPython's cyclic GC
re-walks them on every full collection -- including those triggered by the *client's* JSON parsing in
benchmarks that run server and client in one process (measured 2x slower page parsing). Bytes are
also immutable, so a page can collect references under the lock and encode after releasing it; a
list page is ``orjson.dumps`` of the page with each item passed as an ``orjson.Fragment``.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from bisect import bisect_left, insort
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ._errors import bad_request, expired
from ._selectors import Indexed, selectable_fields

Obj = dict[str, Any]

VERBS = ["create", "delete", "get", "list", "patch", "update"]


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def builtin(self) -> bool:
        # CRD groups must contain a dot and may not end in .k8s.io; everything else is compiled in.
        return "." not in self.group or self.group.endswith(".k8s.io")

    def discovery(self) -> dict[str, Any]:
        return {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": VERBS,
        }


def object_key(namespace: str | None, name: str) -> str:
    # Same order as etcd's "<namespace>/<name>" keys; cluster-scoped objects get an empty namespace.
    return f"{namespace or ''}/{name}"


# A plain tuple of three bytes objects on purpose: CPython's GC untracks a tuple whose items are all
# atomic the first time it examines it, so 50,000 stored objects add nothing to later collections.
# Anything nested (a NamedTuple, a dict, even a tuple of tuples, whose outer tuple is examined before
# the inner ones) stays tracked for longer and made the client's page parsing up to 2x slower in
# in-process benchmarks. Selectors decode the two small index blobs only when they run.
StoredObject = Indexed  # (JSON without apiVersion/kind, labels JSON, field-selector values JSON)

_NO_LABELS = b"{}"  # shared by every unlabelled object


def encode_stored(info: KindInfo, body: Obj) -> StoredObject:
    labels = (body.get("metadata") or {}).get("labels")
    fields = selectable_fields(info.group, info.plural, body)
    return (orjson.dumps(body), orjson.dumps(labels) if labels else _NO_LABELS, orjson.dumps(fields))


def typed_json(info: KindInfo, stored: StoredObject) -> bytes:
    """The stored encoding with apiVersion/kind spliced in front, as single-object answers carry them."""
    prefix = orjson.dumps({"apiVersion": info.api_version, "kind": info.kind})[:-1]
    raw = stored[0]
    return prefix + b"," + raw[1:] if raw != b"{}" else prefix + b"}"


def decode_stored(stored: StoredObject) -> Obj:
    """A private, mutable copy of the stored object."""
    return orjson.loads(stored[0])


@dataclass
class Page:
    items: list[StoredObject]
    last_key: str | None
    has_more: bool
    remaining: int | None


@dataclass
class ResourceStore:
    """All objects of one (group, plural), plus a lazily rebuilt sorted key list for paging."""

    objects: dict[str, StoredObject] = field(default_factory=dict)
    _keys: list[str] | None = None

    def sorted_keys(self) -> list[str]:
        if self._keys is None:
            self._keys = sorted(self.objects)
        return self._keys

    def put(self, key: str, obj: StoredObject) -> None:
        is_new = key not in self.objects
        self.objects[key] = obj
        # Updates keep the key set; a single create costs one insort instead of a full re-sort.
        if is_new and self._keys is not None:
            insort(self._keys, key)

    def put_many(self, pairs: list[tuple[str, StoredObject]]) -> None:
        self.objects.update(pairs)
        self._keys = None

    def remove(self, key: str) -> None:
        del self.objects[key]
        if self._keys is not None:
            del self._keys[bisect_left(self._keys, key)]

    def page(
        self,
        namespace: str | None,
        start: str | None,
        limit: int,
        predicate: Callable[[StoredObject], bool] | None,
    ) -> Page:
        """One page in key order, like etcd3 GetList: keep scanning until ``limit`` items matched."""
        keys = self.sorted_keys()
        low, high = _namespace_range(keys, namespace)
        if start is not None:
            low = max(low, bisect_left(keys, start))
        items: list[StoredObject] = []
        last_key: str | None = None
        index = low
        while index < high:
            if limit and len(items) >= limit:
                break
            last_key = keys[index]
            obj = self.objects[last_key]
            if predicate is None or predicate(obj):
                items.append(obj)
            index += 1
        has_more = index < high
        remaining = high - index if has_more and predicate is None else None
        return Page(items, last_key, has_more, remaining)


def _namespace_range(keys: list[str], namespace: str | None) -> tuple[int, int]:
    if namespace is None:
        return 0, len(keys)
    # "0" is the character after "/", so this brackets exactly the "<ns>/..." keys.
    return bisect_left(keys, f"{namespace}/"), bisect_left(keys, f"{namespace}0")


# --- continue tokens -------------------------------------------------------------------------------


def encode_continue(last_key: str, resource_version: int) -> str:
    # Shaped like the real token (base64url JSON with v/rv/start) plus an issue time for the TTL.
    payload = {
        "v": "meta.k8s.io/v1",
        "rv": resource_version,
        "start": last_key + "\x00",
        "t": time.monotonic(),
    }
    return base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()


def decode_continue(token: str, ttl_s: float) -> tuple[str, int]:
    """Return (start key, snapshot resourceVersion); 410 Expired once the token is older than ``ttl_s``."""
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = orjson.loads(base64.urlsafe_b64decode(padded.encode()))
        start, rv, issued = str(payload["start"]), int(payload["rv"]), float(payload["t"])
    except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise bad_request(f"continue key is not valid: {token!r}") from None
    if time.monotonic() - issued > ttl_s:
        raise expired(inconsistent_continue(start))
    return start, rv


def inconsistent_continue(start: str) -> str:
    """The token a 410 offers: the same start key, at whatever the store holds by then (rv -1)."""
    return encode_continue(start.removesuffix("\x00"), -1)


# --- kind registry ---------------------------------------------------------------------------------

_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int]:
    """Kube-aware ordering (v1 > v1beta1 > v1alpha1), used to pick a group's preferredVersion."""
    match = _VERSION_RE.match(version)
    if not match:
        return (-1, 0, 0)
    stability = {"alpha": 0, "beta": 1, None: 2}[match.group(2)]
    return (stability, int(match.group(1)), int(match.group(3) or 0))


class Registry:
    def __init__(self) -> None:
        self.by_resource: dict[tuple[str, str, str], KindInfo] = {}  # (group, version, plural)
        self.by_kind: dict[tuple[str, str, str], KindInfo] = {}  # (group, version, kind)
        self.stores: dict[tuple[str, str], ResourceStore] = {}  # (group, plural), shared across versions

    def register(self, info: KindInfo) -> None:
        if info.group == "" and info.version != "v1":
            raise ValueError("the core group only serves v1")
        for other in self.by_resource.values():
            if (other.group, other.plural) == (info.group, info.plural) and (
                other.kind != info.kind or other.namespaced != info.namespaced
            ):
                raise ValueError(f"{info.plural}.{info.group} is already registered as {other}")
        self.by_resource[(info.group, info.version, info.plural)] = info
        self.by_kind[(info.group, info.version, info.kind)] = info
        self.stores.setdefault((info.group, info.plural), ResourceStore())

    def resource(self, group: str, version: str, plural: str) -> KindInfo | None:
        return self.by_resource.get((group, version, plural))

    def for_api_version(self, api_version: str, kind: str) -> KindInfo:
        group, _, version = api_version.rpartition("/")
        info = self.by_kind.get((group, version, kind))
        if info is None:
            raise KeyError(f"kind {kind} in {api_version} is not registered with the test server")
        return info

    def store(self, info: KindInfo) -> ResourceStore:
        return self.stores[(info.group, info.plural)]

    def group_versions(self) -> dict[str, list[str]]:
        """Group -> served versions, preferred version first."""
        groups: dict[str, set[str]] = {}
        for info in self.by_resource.values():
            groups.setdefault(info.group, set()).add(info.version)
        return {g: sorted(v, key=version_priority, reverse=True) for g, v in groups.items()}

    def kinds_in(self, group: str, version: str) -> list[KindInfo]:
        return [i for i in self.by_resource.values() if (i.group, i.version) == (group, version)]
