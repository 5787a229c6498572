"""The native YAML reader (reconciler/yamlio/_native_reader.c) against the composer path it stands in front of.

Whenever the native reader reads a text, it must give what libyaml.py's composer path gives -- data with its
types, every start position, every end -- and it must decline (None) whatever it does not read that way.
tests/yamlio/test_fast_paths.py holds the pair (native first) equal to ruamel on the same corpora.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.yamlio import libyaml as yaml_libyaml
from reconciler.yamlio.document import MAX_NODES
from tests.support.helpers import ROOT
from tests.support.yamlio_fast_paths import corpus_texts, documents, typed


@contextmanager
def composer_only() -> Iterator[None]:
    saved = yaml_libyaml._native_read
    yaml_libyaml._native_read = None
    try:
        yield
    finally:
        yaml_libyaml._native_read = saved


def reading(read: Any) -> Any:
    if read is None:
        return None
    docs, ends = read
    return [(typed(data), list(positions.items())) for data, positions in docs], ends


def composed(text: str, max_nodes: int = MAX_NODES) -> Any:
    with composer_only():
        try:
            return reading(yaml_libyaml.documents_and_ends(text, max_nodes))
        except (yaml_libyaml.TooManyNodes, yaml_libyaml.TooDeep) as exc:
            return (type(exc).__name__, exc.line)


def natively(text: str, max_nodes: int = MAX_NODES) -> Any:
    """The native reading, as documents_and_ends asks for it: never for text that is ruamel's."""
    if yaml_libyaml._ruamel_territory(text):
        return None
    return reading(yaml_libyaml.native(text, max_nodes))


def assert_same_when_read(text: str, max_nodes: int = MAX_NODES) -> bool:
    """True when the native reader read `text` (and gave the composer's reading); False when it declined."""
    got = natively(text, max_nodes)
    if got is None:
        return False
    assert got == composed(text, max_nodes), text
    return True


def test_the_native_reader_is_built() -> None:
    # `make test` installs with a C compiler and libyaml's headers (Debian's libyaml-dev); without them the
    # install goes on (the extension is optional) and every file takes the composer path, at ~4x the cost.
    assert yaml_libyaml._native_read is not None, "reconciler/yamlio/_native_reader.c was not built: see pip's log"


def test_every_corpus_file_reads_the_same_and_nearly_all_natively() -> None:
    read = declined = 0
    for _, text in corpus_texts():
        if assert_same_when_read(text):
            read += 1
        elif composed(text) is not None:
            declined += 1
    assert read > 10 * max(declined, 1), (read, declined)


SHAPES = [
    "a: 1\nb: [x, 'y', {c: d}]\nc: {}\nd: []\ne:\n  - f\n  - g: h\n    i: j\n",
    "a: |\n  one\n  two\n\n\nb: >-\n  folded\n  text\n\n# after\nc: |+\n  kept\n\n",
    "list:\n- a\n- - b\n  - c\n-\n  d: e\n",
    "---\na: 1\n---\n---\nb: 2\n...\n",
    "--- ~\n---\na: 1\n--- null\n",
    "",
    "# only a comment\n",
    "\ufeffa: bom\nb: |\n  block after a BOM\n",
    "a: 1\r\nb:\r\n  c: |\r\n    crlf\r\n\r\n",
    "unicode: ünïcödé\nkey_ü: wert\nemoji: \U0001f680 x\nz: |\n  ü\n  \U0001f680\n",
    "a: yes\nb: No\nc: on\nd: 010\ne: 0x1F\nf: 1e3\ng: .inf\nh: ~\ni: ''\nj: 12345678901234567890\n",
    "a: [yes, no, ~, 1, 1.0, '1', -, +x, .git]\nb: {k: off}\n",
    "key with spaces: 1\n\"quoted key\": 2\n'single': 3\n",
    "a: plain\n  continued\nb: \"esc \\t \\u00e9\"\nc: 'it''s'\n",
    "tolerations:\n"
    + "".join(f"  - key: k{i}\n    operator: Equal\n    value: 'v{i}'\n    effect: NoSchedule\n" for i in range(300)),
]


@pytest.mark.parametrize("text", SHAPES)
def test_ordinary_shapes_are_read_natively_and_the_same(text: str) -> None:
    assert assert_same_when_read(text), text


DECLINED = [
    "a: &x 1\nb: 2\n",  # an anchor, even unused
    "a: &x 1\nb: *x\n",  # an alias
    "a: !!str yes\n",  # a tag
    "a: ! yes\n",  # the non-specific tag
    "1: one\n",  # plain keys that are not strings: a number,
    "yes: two\n",  # a Helm boolean,
    "~: three\n",  # a null,
    ": empty\n",  # the empty key,
    "a:\n  <<: {b: 1}\n",  # a merge key
    "a: =\n",  # the value tag's scalar
    "a: 1\na: 2\n",  # a duplicate key (ruamel names both lines)
    "'a': 1\na: 2\n",
    "? [complex]\n: key\n",  # a complex key
    "just a scalar\n",  # a document that is one scalar
    "'quoted scalar'\n",
    "--- |\n  block\n",
    "a: [1, 2\n",  # libyaml's errors
    "a: 'unterminated\n",
    "a: 1\n---\nb: [\n",  # an error in a later document declines the stream
    "a: 0x_\n",  # a scalar ruamel fails on
]


@pytest.mark.parametrize("text", DECLINED)
def test_what_the_native_reader_leaves_to_the_composer(text: str) -> None:
    assert natively(text) is None


def test_too_many_values_and_too_deep_are_left_to_the_composer_which_names_the_line() -> None:
    text = "a: 1\nb: 2\nc: [3, 4]\n"
    assert natively(text, max_nodes=6) is None
    assert composed(text, max_nodes=6) == ("TooManyNodes", 3)
    assert assert_same_when_read(text, max_nodes=9)  # the mapping, five scalars, the list and its two
    deep = "a: " + "[" * (yaml_libyaml.MAX_DEPTH + 1) + "]" * (yaml_libyaml.MAX_DEPTH + 1) + "\n"
    assert natively(deep) is None
    assert composed(deep) == ("TooDeep", 1)
    fits = "a: " + "[" * (yaml_libyaml.MAX_DEPTH - 1) + "]" * (yaml_libyaml.MAX_DEPTH - 1) + "\n"
    assert assert_same_when_read(fits)


@given(st.text(max_size=8) | st.sampled_from(sorted(yaml_libyaml._NOT_STRINGS)))
@settings(max_examples=500, deadline=None)
def test_what_the_native_reader_keeps_as_text_is_what_the_rules_read_as_text(text: str) -> None:
    """The reader keeps a plain scalar as its text unless libyaml.py's word list or number starts say otherwise:
    a new rule in _plain or Helm's reading that the list misses fails here."""
    assert yaml_libyaml._NUMBER_START_BYTES.decode() == "".join(sorted(yaml_libyaml._NUMBER_STARTS))
    if text in yaml_libyaml._NOT_STRINGS or text[:1] in yaml_libyaml._NUMBER_STARTS:
        return  # handed to _plain_scalar, whatever it makes of it
    resolved = yaml_libyaml._plain_scalar(text)
    assert type(resolved) is str and resolved == text


def test_text_that_is_not_utf8_encodable_is_left_to_the_composer() -> None:
    assert natively("a: \ud800\n") is None


@given(documents())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_documents_read_the_same(text: str) -> None:
    assert_same_when_read(text)


TOKENS = [
    *("a", "b", "é", ": ", "- ", "&x ", "*x", "|", ">", "|-", ">+", "#", " ", "\n", "  ", "-", "+", "1", "2"),
    *("'", '"', "[", "]", "{", "}", ",", "?", "!", "yes", "~", "0x1", "1.5", "---", "...", "\r\n", "\ufeff"),
]


@given(st.lists(st.sampled_from(TOKENS), max_size=30).map("".join))
@settings(max_examples=600, deadline=None)
def test_token_soup_reads_the_same_or_is_declined(text: str) -> None:
    assert_same_when_read(text)


SMALL_CORPUS = [text for path, text in corpus_texts() if len(text) < 3000]


@given(st.sampled_from(SMALL_CORPUS), st.lists(st.tuples(st.integers(0, 3000), st.sampled_from(TOKENS)), max_size=4))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_edited_project_files_read_the_same_or_are_declined(text: str, edits: list[tuple[int, str]]) -> None:
    for at, token in edits:
        at %= len(text) + 1
        text = text[:at] + token + text[at:]
    assert_same_when_read(text)


@pytest.mark.parametrize(
    "text",
    [
        SHAPES[-1],  # read
        SHAPES[-1] + "x: &anchor 1\n",  # declined at the end, after building most of the data
        SHAPES[-1] + "x: [\n",  # a libyaml error at the end
        SHAPES[-1] + "x: 0x_\n",  # a Python error from the scalar callback at the end
    ],
    ids=["read", "declined", "libyaml-error", "callback-error"],
)
def test_reading_and_declining_leak_nothing(text: str) -> None:
    for _ in range(3):  # warm: interned strings, caches, the regex behind the callback
        yaml_libyaml.native(text, MAX_NODES)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(50):
            yaml_libyaml.native(text, MAX_NODES)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20_000, grown  # one leaked reading of this text is ~200 KB


def test_the_example_repository_values_read_natively() -> None:
    values = sorted((ROOT / "repo-templates" / "gitops-repo").rglob("*values*.yaml"))
    assert len(values) >= 2
    for file in values:
        assert assert_same_when_read(file.read_text()), file
