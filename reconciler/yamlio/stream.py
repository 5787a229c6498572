"""A large YAML List read one item at a time: libyaml's event parser, each item of a document's top-level `items`
built, handed to the caller and dropped, so memory grows with what the caller keeps, not with the file.

The whole-file readers (`yamlio.document`) keep every value's position and, for ruamel, a round-trip tree: about
500 bytes of memory for each byte of a snapshot (an 18 MB snapshot took 9.1 GB). Here only the values outside
`items` keep their position (the List's metadata: where a wrong annotation is); an item is known by the line it
starts on.

Scalars get the meaning the fast reader gives them (`yamlio.libyaml`: YAML 1.2 resolution, then Helm's reading).
Anchors and aliases are read (PyYAML, which `kai-gitops snapshot` writes with, anchors an object that appears twice):
an alias is a copy of its anchor's value, and counts its values again against the budget, so a few lines cannot
expand into billions of values. What else the fast reader would hand to ruamel — an explicit tag, a merge key, a
complex key, a `%` directive — is refused here with its line (`Unusual`): kubectl and `kai-gitops snapshot` write
none of them. A duplicate key is an error naming both lines, as in every reader; so are the value budget and the
depth limit, counted as the events arrive.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from reconciler.core.jsonvalue import JSONScalar, JSONValue
from reconciler.core.refs import YamlPath
from reconciler.yamlio.helm_scalars import go_integer, helm_key, helm_plain_string
from reconciler.yamlio.libyaml import _NEEDS_RUAMEL, MAX_DEPTH, CSafeLoader, TooDeep, TooManyNodes, _plain

ItemSink = Callable[[JSONValue, int, int], None]  # (item, its index in `items`, the line it starts on)


class Unusual(Exception):
    """A construct this reader does not read (see the module); `line` is where it starts."""

    def __init__(self, what: str, line: int) -> None:
        super().__init__(what, line)
        self.what = what
        self.line = line


class DuplicateKey(Exception):
    def __init__(self, key: str, first: int, second: int) -> None:
        super().__init__(key, first, second)
        self.key, self.first, self.second = key, first, second


@dataclass
class StreamedDocument:
    """One non-empty document, without the items handed out (`items` holds [] where they were)."""

    data: JSONValue
    positions: dict[YamlPath, tuple[int, int]]
    items: int | None  # how many items were handed out; None: the document had no top-level `items` list


@dataclass
class _Frame:
    value: dict[str, JSONValue] | list[JSONValue]
    line: int
    path: YamlPath | None  # None inside a streamed item: no positions kept there
    streams: bool = False  # the top-level `items` list: its items go to the sink
    key: str | None = None  # a mapping's key waiting for its value
    key_lines: dict[str, int] = field(default_factory=dict)
    anchor: str | None = None  # the anchor the value is kept under when it ends
    nodes_before: int = 0  # the count before this value: its own size is the difference at its end


_NO_DOCUMENT = object()


class _Reader:
    def __init__(self, sink: ItemSink, max_nodes: int, key: str) -> None:
        self.sink, self.max_nodes, self.stream_key = sink, max_nodes, key
        self.nodes = 0
        self.stack: list[_Frame] = []
        self.documents: list[StreamedDocument] = []
        self.root: object = _NO_DOCUMENT
        self.positions: dict[YamlPath, tuple[int, int]] = {}
        self.streamed: int | None = None
        self.anchors: dict[str, tuple[JSONValue, int, int]] = {}  # name -> (value, values in it, depth)

    def run(self, text: str) -> list[StreamedDocument]:
        assert CSafeLoader is not None
        parser = CSafeLoader(text)
        handlers: dict[type, Callable[[yaml.Event], None]] = {
            yaml.ScalarEvent: self.scalar,
            yaml.MappingStartEvent: self.start,
            yaml.SequenceStartEvent: self.start,
            yaml.MappingEndEvent: self.end,
            yaml.SequenceEndEvent: self.end,
            yaml.DocumentStartEvent: self.document,
            yaml.DocumentEndEvent: self.document_end,
            yaml.AliasEvent: self.alias,
        }
        try:
            while parser.check_event():
                event = parser.get_event()
                handler = handlers.get(type(event))
                if handler is not None and event is not None:
                    handler(event)
        finally:
            parser.dispose()
        return self.documents

    # -- events ---------------------------------------------------------------------------------------------------

    def document(self, event: yaml.Event) -> None:
        if getattr(event, "version", None) or getattr(event, "tags", None):
            raise Unusual("a % directive", _line(event))
        self.root, self.positions, self.streamed, self.anchors = _NO_DOCUMENT, {(): (1, 1)}, None, {}

    def document_end(self, _event: yaml.Event) -> None:
        if self.root is not _NO_DOCUMENT and self.root is not None:
            self.documents.append(StreamedDocument(self.root, self.positions, self.streamed))  # type: ignore[arg-type]

    def alias(self, event: yaml.Event) -> None:
        line = _line(event)
        name: str = event.anchor  # type: ignore[attr-defined]
        if name not in self.anchors:
            raise Unusual(f"an alias to an undefined anchor &{name}", line)
        value, size, depth = self.anchors[name]
        self.nodes += size
        if self.nodes > self.max_nodes:
            raise TooManyNodes(line)
        if len(self.stack) + depth > MAX_DEPTH:
            raise TooDeep(line)
        top = self.stack[-1] if self.stack else None
        if top is not None and isinstance(top.value, dict) and top.key is None:
            if isinstance(value, dict | list):
                raise Unusual("a complex key", line)
            self._key(top, value, line, _column(event))
            return
        self._item_position(top, line, _column(event))
        self._place(copy.deepcopy(value), line)

    def scalar(self, event: yaml.Event) -> None:
        """The hot path (most events are scalars): counted, converted and placed in one call."""
        mark = event.start_mark
        line = mark.line + 1 if mark is not None else 1
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise TooManyNodes(line)
        value = _scalar(event, line)
        anchor: str | None = event.anchor  # type: ignore[attr-defined]
        if anchor is not None:
            self.anchors[anchor] = (value, 1, 0)
        top = self.stack[-1] if self.stack else None
        if top is not None and isinstance(top.value, dict) and top.key is None:
            self._key(top, value, line, _column(event))
            return
        if top is not None and top.path is not None and not top.streams and isinstance(top.value, list):
            self.positions[(*top.path, len(top.value))] = (line, _column(event))
        self._place(value, line)

    def _key(self, top: _Frame, value: JSONScalar, line: int, column: int) -> None:
        key = helm_key(value)
        if key in top.key_lines:
            raise DuplicateKey(key, top.key_lines[key], line)
        top.key, top.key_lines[key] = key, line
        if top.path is not None:
            self.positions[(*top.path, key)] = (line, column)

    def _item_position(self, top: _Frame | None, line: int, column: int) -> None:
        if top is not None and top.path is not None and not top.streams and isinstance(top.value, list):
            self.positions[(*top.path, len(top.value))] = (line, column)

    def start(self, event: yaml.Event) -> None:
        self._count(event)
        if event.tag not in (None, "!"):  # type: ignore[attr-defined]
            raise Unusual(f"the tag {event.tag}", _line(event))  # type: ignore[attr-defined]
        if len(self.stack) >= MAX_DEPTH:
            raise TooDeep(_line(event))
        parent = self.stack[-1] if self.stack else None
        if parent is not None and isinstance(parent.value, dict) and parent.key is None:
            raise Unusual("a complex key", _line(event))
        path = self._child_path(parent)
        self._item_position(parent, _line(event), _column(event))
        streams = (
            parent is not None
            and len(self.stack) == 1
            and isinstance(parent.value, dict)
            and parent.key == self.stream_key
            and isinstance(event, yaml.SequenceStartEvent)
        )
        anchor: str | None = event.anchor  # type: ignore[attr-defined]
        if streams and anchor is not None:  # its items are handed out, not kept: nothing to copy
            raise Unusual("an anchor on the items list", _line(event))
        value: dict[str, JSONValue] | list[JSONValue] = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append(_Frame(value, _line(event), path, streams, anchor=anchor, nodes_before=self.nodes - 1))
        if streams:
            self.streamed = 0

    def end(self, _event: yaml.Event) -> None:
        frame = self.stack.pop()
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (frame.value, self.nodes - frame.nodes_before, _depth(frame.value))
        self._place(frame.value, frame.line)

    # -- building -------------------------------------------------------------------------------------------------

    def _place(self, value: JSONValue, line: int) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.value, dict):
            assert top.key is not None
            top.value[top.key] = value
            top.key = None
        elif top.streams:
            assert self.streamed is not None
            self.sink(value, self.streamed, line)
            self.streamed += 1
        else:
            top.value.append(value)

    def _child_path(self, parent: _Frame | None) -> YamlPath | None:
        if parent is None:
            return ()
        if parent.path is None or parent.streams:
            return None
        if isinstance(parent.value, dict):
            assert parent.key is not None
            return (*parent.path, parent.key)
        return (*parent.path, len(parent.value))

    def _count(self, event: yaml.Event) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise TooManyNodes(_line(event))


def stream_documents(text: str, sink: ItemSink, max_nodes: int, key: str = "items") -> list[StreamedDocument]:
    """The documents of `text`; each item of a document's top-level `key` list goes to `sink` as it is read.

    Raises Unusual, DuplicateKey, TooManyNodes, TooDeep, and yaml.YAMLError for text libyaml cannot parse."""
    return _Reader(sink, max_nodes, key).run(text)


def available() -> bool:
    return CSafeLoader is not None


def _scalar(event: yaml.Event, line: int) -> JSONScalar:
    """What `yamlio.libyaml` makes of a scalar: YAML 1.2 resolution of a plain one, then Helm's reading."""
    if event.tag is not None:  # type: ignore[attr-defined]
        raise Unusual(f"the tag {event.tag}", line)  # type: ignore[attr-defined]
    text: str = event.value  # type: ignore[attr-defined]
    plain, quoted = event.implicit  # type: ignore[attr-defined]
    if not plain:
        if not quoted:
            raise Unusual("a tagged scalar", line)
        return text
    if text in _NEEDS_RUAMEL:
        raise Unusual("a merge key", line)
    raw = _plain(text)
    if isinstance(raw, str):
        return helm_plain_string(raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return go_integer(raw)
    return raw


def _depth(value: JSONValue) -> int:
    """How many collections deep `value` nests (a scalar: 0); iterative, as anchored values are few and small."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _line(event: yaml.Event) -> int:
    return int(event.start_mark.line) + 1 if event.start_mark is not None else 1


def _column(event: yaml.Event) -> int:
    return int(event.start_mark.column) + 1 if event.start_mark is not None else 1
