"""Byte-preserving YAML edits: the new scalar text is spliced into the original bytes at the node's position.

Why not a ruamel round-trip dump: a dump re-emits the whole file, and even with `preserve_quotes` it
re-indents sequences, re-wraps long lines, re-spaces flow collections and drops or moves some comments
and document markers. A fix pull request must change only the lines it fixes, so ruamel is used only to
compose the node tree (its marks give each value's exact character span) and the file is never re-emitted.
Every result is re-read with the project's own reader (Helm semantics) and must equal the original data
with exactly the intended edits applied; anything else (an anchor shared by two paths, a block scalar,
a value that comes from a merged base file) is refused with a file:line error instead of a wrong diff.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue
from reconciler.core.refs import YamlPath, format_path
from reconciler.findings.finding import EditOp, GitEdit
from reconciler.yamlio.document import load_document, load_documents

_DEFAULT_STEP = 2


@dataclass(frozen=True)
class _Splice:
    start: int
    end: int
    text: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.text + text[self.end :]


def apply_edits(raw: bytes, file: str, edits: list[GitEdit]) -> bytes:
    """`raw` with every edit applied, each re-verified; raises UserError when an edit cannot be made safely."""
    text = raw.decode("utf-8")
    original = [doc.data for doc in load_documents(text, file)]
    for edit in edits:
        text = _apply_one(text, file, edit)
    expected = copy.deepcopy(original)
    for edit in edits:
        _apply_to_data(expected, edit)
    try:
        got = [doc.data for doc in load_documents(text, file)]
    except UserError:
        got = None
    if got != expected:
        raise UserError(
            "the rewritten file does not read back as intended (an anchor/alias shared with another value?)",
            where=file,
            hint="make this edit by hand",
        )
    return text.encode("utf-8")


def _apply_one(text: str, file: str, edit: GitEdit) -> str:
    root = _document_root(text, file, edit.doc)
    newline = "\r\n" if "\r\n" in text else "\n"
    node, depth = _descend(root, edit.path)
    where = f"{file}:{node.start_mark.line + 1}"
    if edit.op is EditOp.RENAME:
        return _rename_key(root, edit, file).apply(text)
    if edit.op is EditOp.REMOVE:
        parent, found = _descend(root, edit.path[:-1])
        if (
            found != len(edit.path) - 1
            or not isinstance(parent, SequenceNode)
            or depth != len(edit.path)
            or not isinstance(edit.path[-1], int)
        ):
            raise UserError(f"cannot remove {format_path(edit.path)}: no such list item in this file", where=where)
        return _remove_item(text, parent, edit.path[-1] % len(parent.value), where).apply(text)
    if edit.op is EditOp.APPEND:
        if depth != len(edit.path) or not isinstance(node, SequenceNode):
            raise UserError(f"cannot append to {format_path(edit.path)}: not a list in this file", where=where)
        return _append_item(text, node, edit.value, newline).apply(text)
    if depth == len(edit.path):
        return _replace_scalar(node, edit.value, where).apply(text)
    if not isinstance(node, MappingNode) or isinstance(edit.path[depth], int):
        raise UserError(
            f"cannot set {format_path(edit.path)}: {format_path(edit.path[:depth]) or 'the document'}"
            " is not a mapping in this file",
            where=where,
            hint="make this edit by hand",
        )
    return _insert_key(text, node, edit.path[depth:], edit.value, newline, where, _indent_step(root)).apply(text)


def _rename_key(root: Node, edit: GitEdit, file: str) -> _Splice:
    """The key's own text respelt; its value, comments and quoting style stay as they are."""
    parent, depth = _descend(root, edit.path[:-1])
    where = f"{file}:{parent.start_mark.line + 1}"
    if depth != len(edit.path) - 1 or not isinstance(parent, MappingNode) or not isinstance(edit.value, str):
        raise UserError(f"cannot rename {format_path(edit.path)}: no such key in this file", where=where)
    keys = {_key_text(key): key for key, _ in parent.value}
    old = keys.get(str(edit.path[-1]))
    if old is None:
        raise UserError(f"cannot rename {format_path(edit.path)}: no such key in this file", where=where)
    where = f"{file}:{old.start_mark.line + 1}"
    if edit.value in keys:
        raise UserError(
            f"cannot rename {format_path(edit.path)} to {edit.value}: that key is already set",
            where=where,
            hint="merge the two keys by hand",
        )
    if old.start_mark.line != old.end_mark.line:
        raise UserError("the key to rename is not a single-line scalar", where=where, hint="make this edit by hand")
    return _Splice(old.start_mark.index, old.end_mark.index, render_scalar(edit.value, old.style))


def _document_root(text: str, file: str, index: int) -> Node:
    roots: list[Node] = [r for r in YAML(typ="rt").compose_all(text) if r is not None]
    if index >= len(roots):
        raise UserError(f"has no YAML document number {index + 1}", where=file)
    return roots[index]


def _descend(node: Node, path: YamlPath) -> tuple[Node, int]:
    """The node at `path`, or the deepest existing ancestor and how many path parts it covers."""
    for depth, part in enumerate(path):
        child = _child(node, part)
        if child is None:
            return node, depth
        node = child
    return node, len(path)


def _child(node: Node, part: str | int) -> Node | None:
    child: Node | None = None  # ruamel's nodes hold their children untyped
    if isinstance(node, SequenceNode) and isinstance(part, int):
        child = node.value[part] if -len(node.value) <= part < len(node.value) else None
    elif isinstance(node, MappingNode) and isinstance(part, str):
        child = next((value for key, value in node.value if _key_text(key) == part), None)
    return child


def _key_text(key: Node) -> str | None:
    """The key as the reader names it (Helm: every key a string, plain `on` is "true")."""
    if not isinstance(key, ScalarNode):
        return None
    if key.style is not None:
        return str(key.value)
    return _plain_key_text(str(key.value))


@functools.lru_cache(maxsize=4096)
def _plain_key_text(text: str) -> str:
    if not text:
        return "null"
    try:
        return next(iter(load_document(f"{text}: 0\n", "key").mapping()), "null")
    except UserError:  # `<<` (a merge key) is no key of its own
        return text


def _replace_scalar(node: Node, value: JSONValue, where: str) -> _Splice:
    if not isinstance(node, ScalarNode) or node.style in ("|", ">") or node.start_mark.line != node.end_mark.line:
        raise UserError("the value to fix is not a single-line scalar", where=where, hint="make this edit by hand")
    if isinstance(value, dict | list):
        return _Splice(node.start_mark.index, node.end_mark.index, _flow(value))
    return _Splice(node.start_mark.index, node.end_mark.index, render_scalar(value, node.style))


def _append_item(text: str, seq: SequenceNode, value: JSONValue, newline: str) -> _Splice:
    items = seq.value
    style = items[-1].style if items and isinstance(items[-1], ScalarNode) else '"'
    rendered = render_scalar(value, style)
    if seq.flow_style:
        if not items:
            close = text.rindex("]", seq.start_mark.index, seq.end_mark.index)
            return _Splice(close, close, rendered)
        end = items[-1].end_mark.index
        return _Splice(end, end, f", {rendered}")
    at = _line_after(text, _block_end(items[-1]))
    return _insert_lines(text, at, [f"{' ' * seq.start_mark.column}- {rendered}"], newline)


def _remove_item(text: str, seq: SequenceNode, index: int, where: str) -> _Splice:
    """The item's text gone: in a flow list with the comma that joined it, in a block list its whole lines
    (with the comment on them). A block list is never emptied: `key:` alone would read as null, not []."""
    items = seq.value
    item = items[index]
    if seq.flow_style:
        if index + 1 < len(items):
            return _Splice(item.start_mark.index, items[index + 1].start_mark.index, "")
        start = items[index - 1].end_mark.index if index else item.start_mark.index
        return _Splice(start, item.end_mark.index, "")
    if len(items) == 1:
        raise UserError("the item to remove is the list's only one", where=where, hint="make this edit by hand")
    line_start = text.rfind("\n", 0, item.start_mark.index) + 1
    if text[line_start : item.start_mark.index].strip() not in ("", "-"):
        raise UserError(
            "the item to remove shares its line with other text", where=where, hint="make this edit by hand"
        )
    return _Splice(line_start, _line_after(text, _block_end(item)), "")


def _insert_key(
    text: str, mapping: MappingNode, rest: YamlPath, value: JSONValue, newline: str, where: str, step: int
) -> _Splice:
    if any(isinstance(part, int) for part in rest):
        raise UserError(f"cannot add list item {format_path(rest)}", where=where, hint="make this edit by hand")
    if mapping.flow_style:
        nested: Any = value
        for part in reversed(rest[1:]):
            nested = {part: nested}
        entry = f"{_plain_key(rest[0])}: {_flow(nested) if isinstance(nested, dict | list) else render_scalar(nested)}"
        if not mapping.value:
            open_at = text.index("{", mapping.start_mark.index) + 1
            return _Splice(open_at, open_at, entry)
        end = int(mapping.value[-1][1].end_mark.index)  # after the last value: the new key reads last
        return _Splice(end, end, f", {entry}")
    if not mapping.value:
        raise UserError("cannot add a key to an empty block mapping", where=where, hint="make this edit by hand")
    last_key, last_value = mapping.value[-1]
    if last_value.start_mark.index < last_key.start_mark.index:  # an alias: its text stands elsewhere
        raise UserError(
            "cannot add a key after a value that comes from an anchor", where=where, hint="make this edit by hand"
        )
    indent = mapping.value[0][0].start_mark.column
    lines = [f"{' ' * (indent + i * step)}{_plain_key(part)}:" for i, part in enumerate(rest)]
    leaf = _flow(value) if isinstance(value, dict | list) else render_scalar(value)
    lines[-1] += f" {leaf}"
    at = _line_after(text, _block_end(last_value))
    return _insert_lines(text, at, lines, newline)


def _insert_lines(text: str, at: int, lines: list[str], newline: str) -> _Splice:
    """New whole lines at `at`; at the end of a file without a final newline, it still has none after."""
    if at == 0 or text[at - 1] == "\n":
        return _Splice(at, at, newline.join(lines) + newline)
    return _Splice(at, at, newline + newline.join(lines))


def _indent_step(root: Node) -> int:
    """The file's own nesting step, read from its first block mapping nested in another (else 2)."""
    stack = [root]
    while stack:
        node = stack.pop(0)
        if not isinstance(node, MappingNode) or node.flow_style:
            continue
        for key, value in node.value:
            if isinstance(value, MappingNode) and not value.flow_style and value.value:
                step = value.value[0][0].start_mark.column - key.start_mark.column
                if step > 0:
                    return int(step)
            stack.append(value)
    return _DEFAULT_STEP


def _block_end(node: Node) -> int:
    """Where a value's text ends: the last scalar of a block collection, else the node's own end."""
    if isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        return _block_end(last[1] if isinstance(last, tuple) else last)
    return int(node.end_mark.index)


def _line_after(text: str, index: int) -> int:
    if index > 0 and text[index - 1] == "\n":
        return index
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def render_scalar(value: JSONValue, style: str | None = None) -> str:
    """YAML text for a scalar that the reader reads back as exactly `value`, in the original quoting style."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    if style == "'":
        return "'" + text.replace("'", "''") + "'"
    if style is None and _plain_reads_back(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def _plain_reads_back(text: str) -> bool:
    if not text or text != text.strip() or any(c in text for c in "#:{}[],&*!|>'\"%@`\n"):
        return False
    try:
        return load_document(f"k: {text}\n", "scalar").mapping().get("k") == text
    except UserError:
        return False


def _plain_key(key: str | int) -> str:
    return render_scalar(str(key))


def _flow(value: JSONValue) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_plain_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) if isinstance(v, dict | list) else render_scalar(v, '"') for v in value) + "]"
    return render_scalar(value)


def _apply_to_data(docs: list[Any], edit: GitEdit) -> None:
    node = docs[edit.doc]
    for part in edit.path[:-1]:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[part]
    last = edit.path[-1] if edit.path else None
    if edit.op is EditOp.RENAME:
        node[edit.value] = node.pop(last)
    elif edit.op is EditOp.APPEND:
        target = node[last] if last is not None else node
        target.append(edit.value)
    elif edit.op is EditOp.REMOVE:
        del node[last]
    elif last is not None:
        node[last] = edit.value
