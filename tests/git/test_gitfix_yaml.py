"""The fix-PR YAML rewrite changes only the lines it fixes, byte for byte, on every example and fixture file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from reconciler.core.errors import UserError
from reconciler.findings.finding import EditOp, GitEdit
from reconciler.gitfix.yaml_splice import _key_text, apply_edits, render_scalar
from reconciler.yamlio.document import load_documents
from tests.support.helpers import FIXTURES, ROOT, TEMPLATE, helm_template

EVERY_FILE = sorted(
    [
        *(FIXTURES / "nvcf").rglob("*.yaml"),
        *(p for p in (ROOT / "repo-templates").rglob("*.yaml") if not helm_template(p)),
        *(FIXTURES / "kai" / "examples").glob("*.yaml"),
    ]
)
LEAVES_PER_FILE = 12  # evenly spaced over the file: the big chart values file has ~1,000 leaves


def _ids(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    kind = type(node).__name__
    if kind == "MappingNode":
        out = []
        for key, value in node.value:
            if type(key).__name__ == "ScalarNode":
                out += _leaves(value, (*path, _key_text(key)))
        return out
    if kind == "SequenceNode":
        return [leaf for i, item in enumerate(node.value) for leaf in _leaves(item, (*path, i))]
    return [(path, node)]


def _containers(node: Any, kind: str, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    found = [(path, node)] if type(node).__name__ == kind else []
    if type(node).__name__ == "MappingNode":
        for key, value in node.value:
            if type(key).__name__ == "ScalarNode" and key.style is None and key.value.isidentifier():
                found += _containers(value, kind, (*path, key.value))
    elif type(node).__name__ == "SequenceNode":
        for i, item in enumerate(node.value):
            found += _containers(item, kind, (*path, i))
    return found


def _roots(text: str) -> list[Any]:
    return [r for r in YAML(typ="rt").compose_all(text) if r is not None]


def _spaced(items: list[Any], count: int) -> list[Any]:
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def _other_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if value is None:
        return "set-by-test"
    return f"{value}-x" if value else "x"


def _changed_lines(before: bytes, after: bytes) -> tuple[list[int], list[bytes], list[bytes]]:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new), "a scalar replacement must not add or remove lines"
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    return changed, [old[i] for i in changed], [new[i] for i in changed]


@pytest.mark.parametrize("file", EVERY_FILE, ids=_ids)
def test_replacing_any_scalar_changes_only_its_own_lines(file: Path) -> None:
    raw = file.read_bytes()
    text = raw.decode()
    docs = load_documents(raw, file.name)
    checked = candidates = 0
    leaves = [(index, path, node) for index, root in enumerate(_roots(text)) for path, node in _leaves(root)]
    for index, path, node in _spaced(leaves, LEAVES_PER_FILE):
        if not path:
            continue
        candidates += 1
        current = docs[index].get(path)
        edit = GitEdit(file.name, path, _other_value(current), doc=index)
        try:
            after = apply_edits(raw, file.name, [edit])
        except UserError as exc:
            # Refused, never wrong: block and multi-line scalars, values shared through an anchor.
            multi_line = node.style in ("|", ">") or node.start_mark.line != node.end_mark.line
            assert multi_line or "anchor" in str(exc) or node.anchor, exc
            continue
        changed, _old, _new = _changed_lines(raw, after)
        assert changed and all(node.start_mark.line <= i <= node.end_mark.line for i in changed), (path, changed)
        assert after.endswith(b"\n") == raw.endswith(b"\n")
        checked += 1
    assert checked > 0 or candidates == 0


@pytest.mark.parametrize("file", EVERY_FILE, ids=_ids)
def test_adding_a_key_adds_exactly_one_line(file: Path) -> None:
    raw = file.read_bytes()
    for index, root in enumerate(_roots(raw.decode())):
        for path, node in _spaced(_containers(root, "MappingNode"), 8):
            if not node.value:
                continue
            after = apply_edits(raw, file.name, [GitEdit(file.name, (*path, "kaiGitopsAdded"), 7, doc=index)])
            old, new = raw.splitlines(keepends=True), after.splitlines(keepends=True)
            if node.flow_style:
                assert len(new) == len(old)
                continue
            assert len(new) == len(old) + 1
            added = [line for line in new if b"kaiGitopsAdded" in line]
            assert len(added) == 1 and added[0].strip() == b"kaiGitopsAdded: 7"
            remaining = list(new)
            remaining.remove(added[0])
            # Every original line, byte for byte, in its order; a file without a final newline keeps none,
            # so a line added after its last line gives that line the newline the new one lost.
            assert [line.rstrip(b"\n") for line in remaining] == [line.rstrip(b"\n") for line in old]
            assert remaining[:-1] == old[:-1] and after.endswith(b"\n") == raw.endswith(b"\n")


@pytest.mark.parametrize("file", EVERY_FILE, ids=_ids)
def test_appending_to_a_list_touches_one_line(file: Path) -> None:
    raw = file.read_bytes()
    for index, root in enumerate(_roots(raw.decode())):
        for path, node in _spaced(_containers(root, "SequenceNode"), 6):
            items = node.value
            if items and type(items[-1]).__name__ != "ScalarNode":
                continue  # lists of mappings are not what fixes append to
            after = apply_edits(raw, file.name, [GitEdit(file.name, path, "KAIScheduler", EditOp.APPEND, doc=index)])
            old, new = raw.splitlines(keepends=True), after.splitlines(keepends=True)
            if node.flow_style:
                changed, _, added = _changed_lines(raw, after)
                assert len(changed) == 1 and b"KAIScheduler" in added[0]
            else:
                assert [line for line in new if line not in old or new.count(line) > old.count(line)]
                assert len(new) == len(old) + 1


def _demo_pr(file: str, edits: list[tuple[str, str]]) -> bytes:
    text = (TEMPLATE / file).read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    return text.encode()


def test_fixing_the_demo_pull_request_restores_the_template_byte_for_byte() -> None:
    file = "clusters/lab/kai-values.yaml"
    child_cpu = "  childResources:\n    cpu:\n      quota: "
    broken = _demo_pr(
        file,
        [
            ("  placementStrategy: binpack", "  placementStrategy: spread"),
            ("    preempt:\n      enabled: false", "    preempt:\n      enabled: yes"),
            (child_cpu + "-1", child_cpu + "0"),
        ],
    )
    edits = [
        GitEdit(file, ("scheduler", "placementStrategy"), "binpack"),
        GitEdit(file, ("scheduler", "actions", "preempt", "enabled"), False),
        GitEdit(file, ("defaultQueue", "childResources", "cpu", "quota"), -1),
    ]
    assert apply_edits(broken, file, edits) == (TEMPLATE / file).read_bytes()


@pytest.mark.parametrize(
    ("line", "value", "expected"),
    [
        ('mode: "spread"  # why\n', "binpack", 'mode: "binpack"  # why\n'),
        ("mode: 'spread'\n", "binpack", "mode: 'binpack'\n"),
        ("mode: spread # keep this comment\n", "binpack", "mode: binpack # keep this comment\n"),
        ("mode: spread\n", "yes", 'mode: "yes"\n'),  # plain `yes` would read back as a boolean
        ("mode: spread\n", "a: b", 'mode: "a: b"\n'),
        ('on: "yes"\n', False, "on: false\n"),  # Helm's `on` key is "true"; a quoted yes is a string
        ("x: 0\n", -1, "x: -1\n"),
        ("x: {quota: 0, limit: -1}\n", -1, "x: {quota: -1, limit: -1}\n"),
    ],
)
def test_quoting_and_comments_are_kept(line: str, value: Any, expected: str) -> None:
    key = next(iter(load_documents(line, "t")[0].data))
    path: tuple[Any, ...] = (key, "quota") if "{" in line else (key,)
    assert apply_edits(line.encode(), "t.yaml", [GitEdit("t.yaml", path, value)]).decode() == expected


def test_crlf_markers_and_missing_final_newline_stay() -> None:
    raw = b"---\r\n# head\r\nscheduler:\r\n    placementStrategy: spread\r\n...\r\n---\r\nother: 1"
    after = apply_edits(
        raw,
        "t.yaml",
        [
            GitEdit("t.yaml", ("scheduler", "placementStrategy"), "binpack"),
            GitEdit("t.yaml", ("other",), 2, doc=1),
            GitEdit("t.yaml", ("scheduler", "actions", "preempt", "enabled"), False),
        ],
    )
    assert after == (
        b"---\r\n# head\r\nscheduler:\r\n    placementStrategy: binpack\r\n"
        b"    actions:\r\n        preempt:\r\n            enabled: false\r\n...\r\n---\r\nother: 2"
    )


def test_a_value_shared_through_an_anchor_is_refused_not_rewritten() -> None:
    raw = b"a: &q {quota: 0}\nb: *q\n"
    with pytest.raises(UserError, match="does not read back as intended"):
        apply_edits(raw, "t.yaml", [GitEdit("t.yaml", ("a", "quota"), -1)])


def test_block_scalars_are_refused() -> None:
    with pytest.raises(UserError, match="single-line scalar"):
        apply_edits(b"s: |\n  text\n", "t.yaml", [GitEdit("t.yaml", ("s",), "other")])


def test_writing_out_missing_canonical_values_builds_readable_nested_blocks() -> None:
    raw = b"# lab values\nscheduler:\n  placementStrategy: binpack\n"
    edits = [
        GitEdit("v.yaml", ("defaultQueue", "createDefaultQueue"), True),
        GitEdit("v.yaml", ("defaultQueue", "parentResources", "cpu", "quota"), -1),
        GitEdit("v.yaml", ("defaultQueue", "parentResources", "cpu", "limit"), -1),
    ]
    after = apply_edits(raw, "v.yaml", edits).decode()
    assert after == (
        "# lab values\nscheduler:\n  placementStrategy: binpack\ndefaultQueue:\n"
        "  createDefaultQueue: true\n  parentResources:\n    cpu:\n      quota: -1\n      limit: -1\n"
    )


@pytest.mark.parametrize(
    ("value", "style"),
    [
        ("binpack", None),
        ("yes", None),
        ("it's", "'"),
        ('x"y', '"'),
        ("", None),
        (" lead", None),
        ("null", None),
        ("123", None),
    ],
)
def test_rendered_scalars_read_back_as_the_same_string(value: str, style: str | None) -> None:
    text = render_scalar(value, style)
    assert load_documents(f"k: {text}\n", "t")[0].data["k"] == value


def test_a_key_merged_in_from_an_anchor_is_refused() -> None:
    raw = b"a: &x\n  placementStrategy: spread\nscheduler:\n  <<: *x\n"
    with pytest.raises(UserError, match="anchor"):
        apply_edits(raw, "t.yaml", [GitEdit("t.yaml", ("scheduler", "placementStrategy"), "binpack")])


def test_a_utf8_bom_stays() -> None:
    raw = "\ufeff# c\nscheduler:\n  placementStrategy: spread\n".encode()
    after = apply_edits(raw, "t.yaml", [GitEdit("t.yaml", ("scheduler", "placementStrategy"), "binpack")])
    assert after == raw.replace(b"spread", b"binpack")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("scheduler:\n  placementStratgy: spread  # ours\n", "scheduler:\n  placementStrategy: spread  # ours\n"),
        ('scheduler: {"placementStratgy": spread}\n', 'scheduler: {"placementStrategy": spread}\n'),
        ("scheduler:\n  'placementStratgy':\n    x: 1\n", "scheduler:\n  'placementStrategy':\n    x: 1\n"),
    ],
)
def test_renaming_a_key_changes_only_the_key(text: str, expected: str) -> None:
    edit = GitEdit("v.yaml", ("scheduler", "placementStratgy"), "placementStrategy", EditOp.RENAME)
    assert apply_edits(text.encode(), "v.yaml", [edit]).decode() == expected


def test_renaming_onto_a_key_that_is_set_is_refused() -> None:
    edit = GitEdit("v.yaml", ("defaultQueues",), "defaultQueue", EditOp.RENAME)
    with pytest.raises(UserError, match="already set"):
        apply_edits(b"defaultQueue: {}\ndefaultQueues:\n  a: 1\n", "v.yaml", [edit])
    with pytest.raises(UserError, match="no such key"):
        apply_edits(b"defaultQueue: {}\n", "v.yaml", [edit])
