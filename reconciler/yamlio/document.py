"""YAML read the way Helm reads it, with the line and column of every value kept.

Helm parses values with YAML 1.1 rules (go-yaml v2): plain `yes/no/on/off/y/n` are booleans and a
duplicate key silently keeps the last value. ruamel follows YAML 1.2 and keeps those as strings. So we
convert plain scalars to what Helm would see, and refuse duplicate keys with both lines named, because
a finding must never depend silently on which of two lines wins.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import OrderedDict
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from reconciler.core.collector import collector_paused
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue, expect_object
from reconciler.core.refs import Location, YamlPath
from reconciler.yamlio.helm_scalars import go_integer, helm_key, helm_plain_string
from reconciler.yamlio.spans import SpanIndex

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError

# An alias bomb expands a few lines into billions of values; real files reuse anchors a little, not this much.
MAX_ALIAS_EXPANSION = 1_000_000
MAX_BYTES = 20 * 1024 * 1024
# Values (scalars, lists, mappings; keys count) one file may hold. Bytes alone do not bound the work: a 20 MB
# flow list `[a,a,a,…]` is 10 million values, ~40 s and ~6 GB to compose. Measured: the largest YAML file of
# the project (a CRD, 843 KB) holds 14,367 values; a file at this budget costs ~2 s and ~300 MB in libyaml.
MAX_NODES = 500_000
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class YamlDoc:
    """One YAML document: plain Python data plus where each value sits in the file."""

    file: str
    data: JSONValue
    positions: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    spans: SpanIndex | None = field(default=None, compare=False, repr=False)  # where values end, on demand

    def locate(self, path: YamlPath) -> Location:
        """Location of `path`, or of its nearest existing parent when the key is absent (where to add it).

        It starts at the key (or item) and ends where its value ends, when the text is known.
        """
        probe = tuple(path)
        while probe and probe not in self.positions:
            probe = probe[:-1]
        line, column = self.positions.get(probe, (1, 1))
        end = self.spans.end_of((line, column), len(probe)) if self.spans is not None and probe else None
        return Location(self.file, line, column, tuple(path), *(end or (None, None)))

    def mapping(self) -> JSONObject:
        """The data of a document whose reader already refused anything but a mapping."""
        return expect_object(self.data, self.file)

    def get(self, path: YamlPath, default: JSONValue = None) -> JSONValue:
        node = self.data
        for part in path:
            if isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
                node = node[part]
                continue
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def decode_text(raw: bytes, file: str, *, max_bytes: int = MAX_BYTES) -> str:
    if len(raw) > max_bytes:
        raise UserError(f"file is {len(raw)} bytes, over the {max_bytes} byte limit", where=file)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", where=f"{file}:{line}", hint="save the file as UTF-8"
        ) from None


def load_documents(
    raw: bytes | str, file: str, *, max_bytes: int = MAX_BYTES, max_nodes: int | None = None, shared: bool = False
) -> list[YamlDoc]:
    """Every document of a YAML stream; empty documents are skipped.

    Read with libyaml when it is installed and the document is one it reads exactly like ruamel
    (`yamlio.libyaml`), else with ruamel; `KAI_GITOPS_YAML_READER=ruamel` forces ruamel. `shared=True`: the
    caller never modifies the documents, so one parse of each distinct file serves every caller. A stream of
    more than `max_nodes` (default MAX_NODES) values is refused, naming the line of the first one past the
    budget, while it is composed.
    """
    text = raw if isinstance(raw, str) else decode_text(raw, file, max_bytes=max_bytes)
    if max_nodes is None:
        max_nodes = MAX_NODES
    # the cache holds files read within the default budget only: its key is the name and content
    if not shared or max_nodes != MAX_NODES or os.environ.get("KAI_GITOPS_PARSE_CACHE", "1") == "0":
        return _parse(text, file, max_nodes)
    key = (file, text)
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return list(_PARSED[key])
    docs = _parse(text, file, max_nodes)
    _PARSED[key] = tuple(docs)
    while len(_PARSED) > PARSE_CACHE_FILES:
        _PARSED.popitem(last=False)
    return docs


# The desired-state reads of a fleet parse each distinct file once per process: 150 add-on clusters share
# one stack base.yaml, and many clusters a queue or values file. Keyed by name and content (errors and
# positions name the file), so a changed file is parsed again. Opt-in (`shared=True`) because the
# documents are handed out as they are, not copied: only read-only callers may take them.
PARSE_CACHE_FILES = 512
_PARSED: OrderedDict[tuple[str, str], tuple[YamlDoc, ...]] = OrderedDict()


def _parse(text: str, file: str, max_nodes: int) -> list[YamlDoc]:
    with collector_paused():  # both readers build a tree of the whole stream first
        return _parse_tree(text, file, max_nodes)


def _parse_tree(text: str, file: str, max_nodes: int) -> list[YamlDoc]:
    from reconciler.yamlio import libyaml as yaml_libyaml

    try:
        if reader_engine() == "libyaml":
            fast = yaml_libyaml.documents_and_ends(text, max_nodes)
            if fast is not None:
                read, ends = fast
                spans = SpanIndex(text, ends)
                return [YamlDoc(file, data, positions, spans) for data, positions in read]
        yaml_libyaml.check_budget(text, max_nodes)  # ruamel counts too, but at ~50x libyaml's cost per value
    except yaml_libyaml.TooManyNodes as exc:
        raise too_many_nodes(file, exc.line, max_nodes) from None
    except yaml_libyaml.TooDeep as exc:
        raise too_deep(file, exc.line) from None
    return ruamel_documents(text, file, max_nodes)


def too_many_nodes(file: str, line: int, max_nodes: int) -> UserError:
    return UserError(
        f"more than {max_nodes:,} YAML values in one file (the limit that keeps a file built to "
        "exhaust memory from doing so)",
        where=f"{file}:{line}",
        hint="split the file; a large snapshot can be written as JSON (`-o FILE.json`)",
    )


def too_deep(file: str, line: int | None) -> UserError:
    from reconciler.yamlio.libyaml import MAX_DEPTH

    return UserError(
        f"YAML nested deeper than {MAX_DEPTH} levels (collections inside collections; the limit "
        "keeps a file built to exhaust the parsers' stack from doing so)",
        where=file if line is None else f"{file}:{line}",
        hint="flatten the structure; no kai-gitops input needs more than a few dozen levels",
    )


def reader_engine() -> str:
    """ "libyaml" (the default when PyYAML has its C extension) or "ruamel"."""
    from reconciler.yamlio import libyaml as yaml_libyaml

    wanted = os.environ.get("KAI_GITOPS_YAML_READER", "libyaml")
    if wanted not in _READERS:
        # A typo ("ruaml") would otherwise silently keep the default reader: the operator comparing readers
        # would be comparing libyaml with itself.
        raise UserError(
            f"KAI_GITOPS_YAML_READER={wanted!r} is not a YAML reader",
            hint="set it to libyaml or ruamel, or unset it",
        )
    return "libyaml" if wanted != "ruamel" and yaml_libyaml.available() else "ruamel"


_READERS = ("libyaml", "ruamel")


def ruamel_documents(text: str, file: str, max_nodes: int | None = None) -> list[YamlDoc]:
    """The reference reader: ruamel's round-trip loader, converted to what Helm sees."""
    from reconciler.yamlio.libyaml import TooDeep, TooManyNodes

    budget = MAX_NODES if max_nodes is None else max_nodes
    yaml = _parser(budget)
    try:
        loaded = list(yaml.load_all(text))
    except TooManyNodes as exc:
        raise too_many_nodes(file, exc.line, budget) from None
    except RecursionError:  # without libyaml's first pass (check_budget) nothing measured the depth before
        raise too_deep(file, _too_deep_line(text)) from None
    except Exception as exc:  # ruamel raises many types; all mean "this file is not valid YAML"
        raise _yaml_error(exc, file, text) from None
    docs = []
    spans = SpanIndex(text)
    for node in loaded:
        if node is None:
            continue
        _refuse_alias_bomb(node, file)
        converter = _Converter(file)
        try:
            data = converter.convert(node, ())
        except TooDeep as exc:
            raise too_deep(file, exc.line) from None
        docs.append(YamlDoc(file, data, converter.positions, spans))
    return docs


def _too_deep_line(text: str) -> int | None:
    """Where a collection first nests deeper than MAX_DEPTH, from ruamel's events (its parser, unlike its
    composer, does not recurse); None if the text ends or fails to parse before."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent

    from reconciler.yamlio.libyaml import MAX_DEPTH

    depth = 0
    try:
        for event in YAML(typ="rt").parse(text):
            depth += isinstance(event, CollectionStartEvent) - isinstance(event, CollectionEndEvent)
            if depth > MAX_DEPTH:
                return int(event.start_mark.line) + 1
    except Exception:  # ruamel raises many types; the depth error stays true without a line
        return None
    return None


def load_document(raw: bytes | str, file: str, *, empty_ok: bool = True, shared: bool = False) -> YamlDoc:
    docs = load_documents(raw, file, shared=shared)
    if len(docs) > 1:
        raise UserError("expected one YAML document, found several", where=f"{file}:1")
    if not docs:
        if not empty_ok:
            raise UserError("file is empty", where=f"{file}:1")
        return YamlDoc(file, {}, {(): (1, 1)})
    return docs[0]


def _parser(max_nodes: int) -> YAML:
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
    from ruamel.yaml.events import AliasEvent

    from reconciler.yamlio.libyaml import TooManyNodes

    class _CountingComposer(Composer):
        """Counts values as they are composed, so a stream past the budget stops before it is built."""

        nodes = 0

        def compose_node(self, parent: object, index: object) -> object:
            if not self.parser.check_event(AliasEvent):  # an alias adds no node; the expansion check counts it
                self.nodes += 1
                if self.nodes > max_nodes:
                    raise TooManyNodes(self.parser.peek_event().start_mark.line + 1)
            return super().compose_node(parent, index)

    class _TimestampsAsText(RoundTripConstructor):
        """Helm turns values into JSON, where a timestamp is its text; and a bad date (2027-13-01) must be a
        string to report with its line, not a constructor crash with none."""

        def construct_unknown(self, node: Any) -> Iterator[Any]:
            """ruamel's, closed cleanly: its bare `except` turns the GeneratorExit of a document that failed
            later into a ConstructorError, which Python prints at exit as "Exception ignored in: <generator …>"
            (a traceback after the one-line error)."""
            inner = cast("Generator[Any, None, None]", super().construct_unknown(node))
            data = next(inner)
            try:
                yield data
            except GeneratorExit:
                with contextlib.suppress(ConstructorError):
                    inner.close()
                raise
            next(inner, None)  # the rest: anchors, the mapping's or sequence's items

    _TimestampsAsText.add_constructor("tag:yaml.org,2002:timestamp", _TimestampsAsText.construct_yaml_str)
    _TimestampsAsText.add_constructor(None, _TimestampsAsText.construct_unknown)
    yaml = YAML(typ="rt")
    yaml.Composer = _CountingComposer
    yaml.Constructor = _TimestampsAsText
    yaml.preserve_quotes = True
    yaml.allow_duplicate_keys = False
    return yaml


def _yaml_error(exc: Exception, file: str, text: str) -> UserError:
    from ruamel.yaml.error import MarkedYAMLError

    from reconciler.yamlio.syntax import describe

    if type(exc).__name__ == "DuplicateKeyError" and isinstance(exc, MarkedYAMLError):
        key = re.search(r'duplicate key "([^"]*)"', str(exc))
        name = key.group(1) if key else "?"
        return duplicate_key_error(file, name, *_duplicate_key_lines(text, exc, name))
    problem = describe(exc, text)
    where = file if problem.line is None else f"{file}:{problem.line}:{problem.column}"
    return UserError(f"invalid YAML: {problem.message}", where=where, hint=problem.hint)


def duplicate_key_error(file: str, name: str, first: int, second: int) -> UserError:
    return UserError(
        f'duplicate key "{name}" at lines {first} and {second}',
        where=f"{file}:{second}",
        hint="Helm would silently keep the last one; delete the line you do not mean",
    )


def _duplicate_key_lines(text: str, exc: MarkedYAMLError, name: str) -> tuple[int, int]:
    """ruamel marks the mapping's start, not the first key: re-compose (no duplicate check) to find both keys."""
    mapping_mark, second = exc.context_mark, exc.problem_mark.line + 1
    from ruamel.yaml import YAML

    try:
        roots = list(YAML(typ="rt").compose_all(text))
    except Exception:  # composing failed too: the mapping's start is the best line we have
        return mapping_mark.line + 1, second
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node.value, list):
            continue
        seen.add(id(node))
        pairs = [p for p in node.value if isinstance(p, tuple)]
        if pairs and (node.start_mark.line, node.start_mark.column) == (mapping_mark.line, mapping_mark.column):
            lines = [k.start_mark.line + 1 for k, _ in pairs if getattr(k, "value", None) == name]
            if len(lines) >= 2:
                return lines[0], lines[-1] if lines[-1] == second else second
        stack.extend(child for p in node.value for child in (p if isinstance(p, tuple) else (p,)))
    return mapping_mark.line + 1, second


def _refuse_alias_bomb(root: object, file: str) -> None:
    """Expanded size counted once per distinct container, so a bomb is caught before it is expanded."""
    sizes: dict[int, int] = {}

    def size(node: object) -> int:
        if not isinstance(node, dict | list):
            return 1
        key = id(node)
        if key not in sizes:
            sizes[key] = 0  # a self-referencing alias counts once instead of recursing forever
            children = node.values() if isinstance(node, dict) else node
            sizes[key] = 1 + sum(size(child) for child in children)
        return sizes[key]

    total = size(root)
    if total - len(sizes) <= MAX_ALIAS_EXPANSION:
        return
    line = 1
    if isinstance(root, dict):
        worst = max(root, key=lambda k: size(root[k]))
        line = (_lc(root, "key", worst) or (1, 1))[0]
    raise UserError(
        f"YAML aliases expand to {total:,} values (an alias bomb)",
        where=f"{file}:{line}",
        hint="remove the nested anchors/aliases",
    )


class _Converter:
    """Turns a ruamel round-trip tree into plain data the way Helm sees it, recording positions."""

    def __init__(self, file: str) -> None:
        from reconciler.yamlio.libyaml import MAX_DEPTH

        self.file = file
        self.positions: dict[YamlPath, tuple[int, int]] = {(): (1, 1)}
        self.max_depth = MAX_DEPTH

    def convert(self, node: object, path: YamlPath) -> JSONValue:
        if isinstance(node, (dict, list)) and len(path) >= self.max_depth:
            from reconciler.yamlio.libyaml import TooDeep

            lc = getattr(node, "lc", None)  # where the collection itself starts, as libyaml's events say
            raise TooDeep(lc.line + 1 if lc is not None and lc.line is not None else self.positions[path][0])
        if isinstance(node, dict):
            return dict(self._mapping_items(node, path))
        if isinstance(node, list):
            return [self.convert(item, (*path, i)) for i, item in enumerate(self._seq_items(node, path))]
        value = _scalar(node)
        if isinstance(value, str):
            self._refuse_surrogate(value, path)
        return value

    def _refuse_surrogate(self, text: str, path: YamlPath) -> None:
        """ruamel takes a `"\\ud800"` escape; libyaml and go-yaml (Helm) refuse it, and no output could
        carry it (UTF-8 cannot encode half a surrogate pair)."""
        found = _SURROGATE.search(text)
        if found:
            line, column = self.positions.get(path, (1, 1))
            raise UserError(
                f"invalid YAML: \\u{ord(found.group()):04x} is half of a UTF-16 surrogate pair, not a character",
                where=f"{self.file}:{line}:{column}",
                hint="write the character itself, or its \\U escape",
            )

    def _mapping_items(self, node: dict[object, object], path: YamlPath) -> Iterator[tuple[str, JSONValue]]:
        lines: dict[str, int] = {}
        for raw_key, value in node.items():
            key = helm_key(_scalar(raw_key))
            child = (*path, key)
            position = _lc(node, "key", raw_key)  # ruamel keeps positions under the key as written
            if position is not None:
                self.positions[child] = position
            self._refuse_surrogate(key, child)
            converted = self.convert(value, child)
            if key in lines:  # `1:` and "1":, or `yes:` and `true:` — distinct in YAML, one key to Helm
                raise duplicate_key_error(self.file, key, lines[key], position[0] if position else 1)
            lines[key] = position[0] if position else 1
            yield key, converted

    def _seq_items(self, node: list[object], path: YamlPath) -> Iterator[object]:
        for i, item in enumerate(node):
            position = _lc(node, "item", i)
            if position is not None:
                self.positions[(*path, i)] = position
            yield item


def _lc(node: object, kind: str, key: object) -> tuple[int, int] | None:
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        line, column = getattr(lc, kind)(key)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return line + 1, column + 1


def _scalar(node: object) -> JSONValue:
    from ruamel.yaml.scalarstring import ScalarString

    if isinstance(node, ScalarString):
        if type(node).__name__ != "PlainScalarString":
            return str(node)  # quoted, literal and folded: strings, never booleans
        node = str(node)  # an anchored plain scalar: what Helm reads it as, like any plain one
    if isinstance(node, bool) or node is None:
        return node
    if type(node).__name__ == "ScalarBoolean":  # an anchored boolean: an int subclass in ruamel
        return bool(node)
    if isinstance(node, str):
        return helm_plain_string(str(node))
    if isinstance(node, int):
        return go_integer(int(node))
    if isinstance(node, float):
        return float(node)
    return str(node) if not isinstance(node, int | float) else node
