"""Where a YAML value ends, for reports that highlight a whole region (SARIF, annotations).

The reader keeps where every key and item starts; the end is only needed for the few values a finding
points at, so it is computed on first use from the same text with libyaml's composer (C, fast), whose
nodes carry start and end marks. A value ends at its last character: a block collection at the end of its
last child, a block scalar before its trailing blank lines, so no trailing comment or blank line is
highlighted.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yaml.nodes import Node, ScalarNode

Position = tuple[int, int]  # 1-based line and column

# Starts and ends are kept as one int each (line, column and depth packed): a 5 MB values file holds ~230,000
# values, and a dict of int to int is a third of the size of one of tuples.
_COLUMNS = 1 << 32  # over any column of a file within the reader's byte limit
_DEPTHS = 1 << 8  # over the readers' nesting limit


def pack_start(line: int, column: int, depth: int) -> int:
    return (line * _COLUMNS + column) * _DEPTHS + depth


def pack_end(line: int, column: int) -> int:
    return line * _COLUMNS + column


def value_end(node: ScalarNode, text: str) -> int:
    """Packed end of scalar `node` of `text` (without its BOM): its end mark, a block scalar's before its
    trailing blank lines (so no trailing comment or blank line is highlighted)."""
    mark = node.end_mark
    if node.style not in ("|", ">"):
        return pack_end(mark.line + 1, mark.column + 1)
    return block_scalar_end(text, node.start_mark.index, mark.index, mark.line)


def block_scalar_end(text: str, start: int, end: int, end_line: int) -> int:
    """Packed end of the block scalar between libyaml's marks `start` and `end` (0-based indexes into `text`
    and the end mark's 0-based line), before its trailing blank lines."""
    index = end
    while index > start and text[index - 1] in " \t\r\n":
        index -= 1
    line = end_line - text.count("\n", index, end)
    return pack_end(line + 1, index - (text.rfind("\n", 0, index) + 1) + 1)


class SpanIndex:
    """Maps the start of a key (or sequence item) and its depth to the end of its value; built once, lazily.

    The depth (length of the YAML path) tells apart an item and the first key of the mapping it holds,
    which start at the same place.
    """

    def __init__(self, text: str, packed: dict[int, int] | None = None) -> None:
        """`packed`: the ends the libyaml reader recorded while composing (pack_start -> pack_end); without
        them (ruamel read the file) the text is composed again on first use."""
        self._text = text
        self._packed = packed
        self._ends: dict[tuple[int, int, int], Position] | None = None

    def end_of(self, start: Position, depth: int) -> Position | None:
        """1-based (line, column just after the last character) of the value whose key starts at `start`."""
        if self._packed is not None:
            end = self._packed.get(pack_start(*start, depth))
            return None if end is None else divmod(end, _COLUMNS)
        if self._ends is None:
            self._ends = _index(self._text)
        return self._ends.get((*start, depth))


def _index(text: str) -> dict[tuple[int, int, int], Position]:
    import yaml

    # libyaml's marks do not count a leading BOM (columns start after it): drop it so the line starts agree
    text = text.removeprefix("\ufeff")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        roots = list(yaml.compose_all(text, Loader=loader))
    except yaml.YAMLError:  # the main reader accepted it; without ends a report still has starts
        return {}
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    ends: dict[tuple[int, int, int], Position] = {}
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(root, 0) for root in roots if root is not None]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:  # an alias is the same node object: visit once
            continue
        seen.add(id(node))
        for key, value in _children(node):
            ends[(key.start_mark.line + 1, key.start_mark.column + 1, depth + 1)] = _end(value, text, line_starts)
            stack.append((value, depth + 1))
    return ends


def _children(node: Node) -> list[tuple[Node, Node]]:
    """(node that marks the start, value node): mapping entries start at the key, items at themselves."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        return list(node.value)
    if isinstance(node, yaml.SequenceNode):
        return [(item, item) for item in node.value]
    return []


def _end(node: Node, text: str, line_starts: list[int]) -> Position:
    import yaml

    depth = 0
    while isinstance(node, yaml.CollectionNode) and not node.flow_style and node.value and depth < 10_000:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
        depth += 1
    index = node.end_mark.index
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        while index > node.start_mark.index and text[index - 1] in " \t\r\n":
            index -= 1
    line = bisect.bisect_right(line_starts, index) - 1
    return line + 1, index - line_starts[line] + 1
