"""The fast path of `yamlio.document`: libyaml's C composer (PyYAML's CSafeLoader), converted the way Helm reads it.

ruamel's pure-Python parser costs ~10 ms for a 2 KB values file; libyaml composes it in well under 1 ms,
and its nodes carry the same start line and column. Only the parse changes: scalars are resolved with
ruamel's own YAML 1.2 rules (libyaml's loader would apply YAML 1.1: `010` octal, `1_0:30` sexagesimal)
and then given Helm's meaning exactly as `yamlio.document` does.

This reader *declines* (returns None) whatever it does not handle identically — libyaml errors, explicit
tags, aliases (so alias bombs too), `%` directives, tabs, merge keys (`<<`), complex and
explicit keys, duplicate keys, a scalar ruamel's constructor would choke on — and `yamlio.document` then reads
the file with ruamel, so every error message and every unusual document comes out exactly as before.
tests/yamlio/test_fast_paths.py checks that both readers give the same data and positions on every YAML file
of the project and on generated and fuzzed ones.

When the native reader (_native_reader.c, built at install time) is there, it reads first: the same subset
from libyaml's events in one pass, declining more than the composer below does (anchors, tags, plain keys
that are not strings); what it declines the composer reads. tests/yamlio/test_native_reader.py holds the two
equal.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reconciler.core.jsonvalue import JSONScalar, JSONValue
from reconciler.core.refs import YamlPath
from reconciler.yamlio.helm_scalars import HELM_FALSE, HELM_TRUE, go_integer, helm_key, helm_plain_string
from reconciler.yamlio.spans import block_scalar_end, pack_end, pack_start, value_end

Documents = list[tuple[JSONValue, dict[YamlPath, tuple[int, int]]]]
NativeRead = Callable[
    [bytes, int, int, frozenset[str], bytes, Callable[[str], JSONScalar], Callable[[int, int, int], int]],
    tuple[Documents, dict[int, int]] | None,
]

_native_read: NativeRead | None
try:
    from reconciler.yamlio._native_reader import read as _native_read
except ImportError:  # installed without a C compiler or libyaml's headers: the composer reads everything
    _native_read = None

# None when PyYAML was built without libyaml: yamlio.document falls back to ruamel
CSafeLoader: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)

_PLAIN, _QUOTED, _COLLECTION = "?plain", "?quoted", "?collection"

# ruamel's YAML 1.2 implicit resolvers (ruamel/yaml/resolver.py). Its booleans and nulls are exact words, kept
# as sets (a lookup costs a fraction of a regex match, and a values file's plain strings often start with the
# `n`, `t` or `f` that sends ruamel to those patterns); a number starts with one of _NUMBER_STARTS and is
# tried as a float, then as an int, in ruamel's order.
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = frozenset(("~", "null", "Null", "NULL", ""))
_NUMBER_STARTS = frozenset("-+0123456789.")
_FLOAT = re.compile(
    r"""^(?:
     [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_INT = re.compile(
    r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0o?[0-7_]+
    |[-+]?[0-9_]+
    |[-+]?0x[0-9a-fA-F_]+)$""",
    re.X,
)

_NEEDS_RUAMEL = ("<<", "=")  # merge key, and the `value` tag: ruamel gives them meanings of its own

# The plain scalars whose value is not their text, as the native reader is told: the words above and Helm's
# booleans, and anything that starts like a number. It hands those to _plain_scalar and keeps the rest as text.
_NOT_STRINGS = frozenset((*_NULLS, *_BOOLS, *HELM_TRUE, *HELM_FALSE, *_NEEDS_RUAMEL))
_NUMBER_START_BYTES = "".join(sorted(_NUMBER_STARTS)).encode()


class Decline(Exception):
    """Not something this reader handles exactly like ruamel: read the file with ruamel instead."""


class TooManyNodes(Exception):
    """The stream holds more values than the budget; `line` is where the first one past it starts (raised by
    both readers: ruamel's counting composer in yamlio.document too)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


# Collections one inside another. Both parsers recurse per level when they build a tree (ruamel runs out of
# Python's stack near 300 levels, libyaml stops at 1,000), and so does the code that reads the tree; the
# deepest YAML of the project (a CRD's schema) nests 29 levels.
MAX_DEPTH = 100


class TooDeep(Exception):
    """A collection nested deeper than MAX_DEPTH; `line` is where the first one past it starts (raised by both
    readers)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def available() -> bool:
    return CSafeLoader is not None


if CSafeLoader is not None:

    class _Composer(yaml.CSafeLoader):
        """Composes only; tags are marked, not resolved (resolution happens below, with 1.2 rules).

        libyaml's C composer asks `resolve` for the tag of every node (explicit tags are ruamel's), so
        counting there stops a stream past the budget before it is built."""

        nodes = 0
        max_nodes = 0

        def resolve(self, kind: type[Node], value: str | None, implicit: tuple[bool, bool]) -> str:
            self.nodes += 1
            if self.nodes > self.max_nodes:
                raise _OverBudget
            if kind is ScalarNode:
                if implicit[0]:
                    return _PLAIN
                return _QUOTED if implicit[1] else "!"  # `! x`: ruamel's business
            return _COLLECTION


class _OverBudget(Exception):
    pass


def documents(text: str, max_nodes: int) -> list[tuple[JSONValue, dict[YamlPath, tuple[int, int]]]] | None:
    """(data, positions) per non-empty document, or None to have ruamel read the file.

    Raises TooManyNodes when the stream holds more than `max_nodes` values (ruamel would count the same)."""
    read = documents_and_ends(text, max_nodes)
    return None if read is None else read[0]


def documents_and_ends(
    text: str, max_nodes: int
) -> tuple[list[tuple[JSONValue, dict[YamlPath, tuple[int, int]]]], dict[int, int]] | None:
    """`documents`, plus where every value of the stream ends (spans.pack_start -> spans.pack_end), taken from
    the same composed nodes: composing the text a second time for the ends cost as much as reading it."""
    if CSafeLoader is None or _ruamel_territory(text):
        return None
    read = native(text, max_nodes)
    if read is not None:
        return read
    try:
        loader = _Composer(text)
    except Exception:  # e.g. text libyaml cannot take in at all: ruamel decides
        return None
    loader.max_nodes = max_nodes
    try:
        return _convert(_compose(loader), text)
    except _OverBudget:
        raise TooManyNodes(_line_of_node(text, max_nodes + 1) or 1) from None
    except TooDeep:
        raise
    except Exception:  # libyaml errors, Decline, a scalar ruamel also fails on: ruamel decides
        return None
    finally:
        loader.dispose()


def native(text: str, max_nodes: int) -> tuple[Documents, dict[int, int]] | None:
    """The native reader's `documents_and_ends`, None when it is not built or declines the text."""
    if _native_read is None:
        return None
    block_end = functools.partial(block_scalar_end, text.removeprefix("\ufeff"))
    try:
        return _native_read(
            text.encode(), max_nodes, MAX_DEPTH, _NOT_STRINGS, _NUMBER_START_BYTES, _plain_scalar, block_end
        )
    except (Decline, ValueError, OverflowError):  # a scalar ruamel fails on, text not UTF-8: the composer decides
        return None


def _compose(loader: yaml.CSafeLoader) -> list[Node]:
    roots: list[Node] = []
    while loader.check_node():
        node = loader.get_node()
        if node is not None:  # check_node() said there is one
            roots.append(node)
    return roots


def _convert(
    roots: list[Node], text: str
) -> tuple[list[tuple[JSONValue, dict[YamlPath, tuple[int, int]]]], dict[int, int]] | None:
    out = []
    ends: dict[int, int] = {}
    text = text.removeprefix("\ufeff")  # libyaml's marks do not count a leading BOM
    aliases = "*" in text  # an alias needs its `*`; looked for once a stream, not once a document
    for root in roots:
        if isinstance(root, ScalarNode) and root.style in ("|", ">"):
            return None  # its content may start at column 0, where the parsers disagree on comments
        if isinstance(root, ScalarNode) and root.tag == _PLAIN and _plain(root.value) is None:
            continue  # an empty document, as ruamel's load_all gives None for
        converter = _Converter(text, ends, aliases)
        out.append((converter.convert(root, ()), converter.positions))
    return out, ends


def check_budget(text: str, max_nodes: int) -> None:
    """Raises TooManyNodes when libyaml's parser counts more than `max_nodes` values, TooDeep when a collection
    nests deeper than MAX_DEPTH: a cheap first pass (~0.7 s per million values) for text ruamel will compose at
    ~40 us a value, and recursively. Text libyaml cannot parse passes; ruamel counts and measures it itself."""
    if CSafeLoader is not None:
        line = _line_of_node(text, max_nodes + 1)
        if line is not None:
            raise TooManyNodes(line)


def _line_of_node(text: str, ordinal: int) -> int | None:
    """The line where the `ordinal`-th value starts, None when there are fewer (or libyaml cannot parse the
    text); TooDeep first if a collection nests too deep before it. The C composer keeps no position a Python
    hook can read, so its events are replayed."""
    assert CSafeLoader is not None
    parser = CSafeLoader(text)
    seen = depth = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
            elif isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                seen += 1
                if seen >= ordinal:
                    return _line(event)
                if not isinstance(event, yaml.ScalarEvent) and (depth := depth + 1) > MAX_DEPTH:
                    raise TooDeep(_line(event))
    except yaml.YAMLError:
        return None
    finally:
        parser.dispose()
    return None


def _line(event: yaml.Event) -> int:
    return int(event.start_mark.line) + 1 if event.start_mark is not None else 1


# Where the two parsers part ways (found by fuzzing both, tests/yamlio/test_fast_paths.py): anchor and alias
# names with characters libyaml does not allow (it ends the name there, YAML 1.2 at the next space), tags,
# explicit keys (`? k`), a carriage return alone, and block scalar headers other than `|`/`>` with
# chomping/indentation indicators and a comment. A block scalar as the whole document, and any alias,
# are declined after composing.
_ODD_TOKENS = re.compile(
    r"(?:^|[\s\[{,])[&*][\w-]*[^\w\s,\[\]{}-]"  # odd anchor or alias name
    r"|(?:^|[\s\[{,])!\S"  # tag
    r"|(?:^|[\s\[{,])\?"  # explicit key
    r"|\r(?!\n)"  # lone carriage return
    r"|(?:^|[:-][ ]+)(?:&\S*[ ]+)?[ ]*[|>](?![-+1-9]{0,2}(?:[ ]+#[^\n]*)?(?:\r?\n|$))",  # odd block header
    re.MULTILINE | re.ASCII,
)

# One of these is in every match of _ODD_TOKENS: without any, the pattern (~0.1 s a MB) need not run.
_ODD_TOKEN_CHARS = "&*!?\r|>"

# NEL and the Unicode line/paragraph separators: line breaks to one parser, not the other. Looked for with `in`
# (a C search of the text): a regex over the characters of 5 MB of text took ~0.1 s.
_ODD_BREAKS = ("\x85", "\u2028", "\u2029")


def _ruamel_territory(text: str) -> bool:
    """Text for ruamel: a directive (`%YAML 1.1` changes resolution), tabs (ruamel refuses some that libyaml
    allows), odd line breaks, or one of the constructs above."""
    return (
        text.startswith("%")
        or "\n%" in text
        or "\t" in text
        or any(odd in text for odd in _ODD_BREAKS)
        or text.find("\ufeff", 1) != -1  # a BOM past the start
        or (any(c in text for c in _ODD_TOKEN_CHARS) and _ODD_TOKENS.search(text) is not None)
    )


class _Converter:
    """Data and start positions of one document, and (into the stream's `ends`) where each value ends.

    A 5 MB values file is ~300,000 nodes: an alias is looked for only when the text can hold one, and each
    distinct key is resolved once."""

    def __init__(self, text: str, ends: dict[int, int], aliases: bool) -> None:
        """`aliases`: whether the text may hold one (it has a `*`); when not, nodes are not remembered."""
        self.positions: dict[YamlPath, tuple[int, int]] = {(): (1, 1)}
        self.seen: set[int] | None = set() if aliases else None
        self.text = text
        self.ends = ends
        self.keys: dict[tuple[str, str], tuple[JSONScalar, str]] = {}
        self.last_end = 0  # packed end of the value converted last: a block collection ends where its last child does

    def convert(self, node: Node, path: YamlPath) -> JSONValue:
        if self.seen is not None:
            if id(node) in self.seen:  # composed once, reached twice: an alias
                raise Decline("alias: ruamel measures the expansion first")
            self.seen.add(id(node))
        if isinstance(node, ScalarNode):
            self.last_end = value_end(node, self.text)
            return _scalar(node)
        if len(path) >= MAX_DEPTH:
            raise TooDeep(node.start_mark.line + 1)
        if node.tag != _COLLECTION:
            raise Decline(f"explicit tag {node.tag}")
        if isinstance(node, SequenceNode):
            items = self._sequence(node, path)
            self._collection_end(node)
            return items
        if not isinstance(node, MappingNode):
            raise Decline(f"a {type(node).__name__}")
        out = self._mapping(node, path)
        self._collection_end(node)
        return out

    def _collection_end(self, node: SequenceNode | MappingNode) -> None:
        if node.flow_style or not node.value:
            self.last_end = pack_end(node.end_mark.line + 1, node.end_mark.column + 1)
        # else: a block collection ends where its last child's value ends, which was converted last

    def _sequence(self, node: SequenceNode, path: YamlPath) -> list[JSONValue]:
        items: list[JSONValue] = []
        depth = len(path) + 1
        positions, ends = self.positions, self.ends
        for i, item in enumerate(node.value):
            child = (*path, i)
            start = item.start_mark
            line, column = start.line + 1, start.column + 1
            positions[child] = (line, column)
            items.append(self.convert(item, child))
            ends[pack_start(line, column, depth)] = self.last_end
        return items

    def _mapping(self, node: MappingNode, path: YamlPath) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {}
        raw_keys: set[JSONScalar] = set()
        depth = len(path) + 1
        positions, ends = self.positions, self.ends
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise Decline("complex key")
            if key_node.tag == _PLAIN and key_node.value in _NEEDS_RUAMEL:
                raise Decline("merge key")
            raw, key = self._key(key_node)
            if raw in raw_keys or key in out:
                raise Decline("duplicate key: ruamel names both lines")
            raw_keys.add(raw)
            child = (*path, key)
            start = key_node.start_mark
            line, column = start.line + 1, start.column + 1
            positions[child] = (line, column)
            out[key] = self.convert(value_node, child)
            ends[pack_start(line, column, depth)] = self.last_end
        return out

    def _key(self, node: ScalarNode) -> tuple[JSONScalar, str]:
        """The key's value as ruamel reads it and the string Helm makes of it; a file repeats its keys (a list of
        tolerations says `key`, `operator`, `value`, `effect` in each), so each distinct key is resolved once."""
        memo = (node.tag, node.value)
        known = self.keys.get(memo)
        if known is None:
            raw = _scalar_raw(node)
            known = self.keys[memo] = (raw, helm_key(_helm_scalar(raw, node)))
        return known


def _scalar(node: ScalarNode) -> JSONScalar:
    return _helm_scalar(_scalar_raw(node), node)


def _scalar_raw(node: ScalarNode) -> JSONScalar:
    """The value ruamel's round-trip constructor gives the scalar (before Helm's reading of it)."""
    text: str = node.value
    if node.tag == _QUOTED or node.style in ("|", ">"):
        return text
    if node.tag != _PLAIN:
        raise Decline(f"explicit tag {node.tag}")
    if text in _NEEDS_RUAMEL:
        raise Decline("merge or value tag")
    return _plain(text)


def _helm_scalar(raw: JSONScalar, node: ScalarNode) -> JSONScalar:
    return _helm_meaning(raw, plain=node.tag == _PLAIN)


def _helm_meaning(raw: JSONScalar, plain: bool) -> JSONScalar:
    if isinstance(raw, str) and plain:
        return helm_plain_string(raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return go_integer(raw)
    return raw


def _plain_scalar(text: str) -> JSONScalar:
    """What `_scalar` gives a plain scalar of this text: the native reader asks for those not read as strings."""
    if text in _NEEDS_RUAMEL:
        raise Decline("merge or value tag")
    return _helm_meaning(_plain(text), plain=True)


def _plain(value: str) -> JSONScalar:
    if value in _NULLS:
        return None
    if (known := _BOOLS.get(value)) is not None:
        return known
    if value[:1] in _NUMBER_STARTS:
        if _FLOAT.match(value):
            return _float(value)
        if _INT.match(value):
            return _int(value)
    return value  # strings, and timestamps, which Helm sees as their text


def _int(text: str) -> int:
    """ruamel's RoundTripConstructor.construct_yaml_int for YAML 1.2, value only (it raises where ruamel does)."""
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if value.startswith(prefix):
            return sign * int(value[2:], base)
    return sign * int(value)


def _float(text: str) -> float:
    """ruamel's construct_yaml_float for YAML 1.2, value only."""
    value = text.replace("_", "").lower()
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * float("inf")
    if value == ".nan":
        return float("nan")
    return sign * float(value)
