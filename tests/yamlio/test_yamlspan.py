"""Locations end where the YAML value ends: what SARIF regions and annotations highlight."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.yamlio import libyaml as yaml_libyaml
from reconciler.yamlio import spans
from reconciler.yamlio.document import MAX_NODES, load_document, load_documents
from tests.support.helpers import ROOT
from tests.support.yamlio_fast_paths import corpus
from tests.support.yamlio_fast_paths import documents as generated_documents

TEXT = """\
a:
  b: [x, "yy", z]   # comment not highlighted
  u: "ünï"  # x
  l:
    - one
    - k: v
      m: 2   # trailing
  s: |
    text
    more

  # comment
z: 1
"""


def span(path: tuple[str | int, ...], text: str = TEXT) -> tuple[int | None, ...]:
    loc = load_document(text, "f.yaml").locate(path)
    return loc.line, loc.column, loc.end_line, loc.end_column


def test_scalar_ends_after_its_last_character_with_unicode_counted_as_characters() -> None:
    assert span(("a", "u")) == (3, 3, 3, 11)
    assert span(("z",)) == (13, 1, 13, 5)


def test_flow_sequence_and_its_items() -> None:
    assert span(("a", "b")) == (2, 3, 2, 18)
    assert span(("a", "b", 1)) == (2, 10, 2, 14)


def test_block_collections_end_at_their_last_value_not_at_a_trailing_comment() -> None:
    assert span(("a", "l")) == (4, 3, 7, 11)
    assert span(("a", "l", 1)) == (6, 7, 7, 11)


def test_block_scalar_ends_before_trailing_blank_lines() -> None:
    assert span(("a", "s")) == (8, 3, 10, 9)


def test_absent_key_points_at_its_parent_entry() -> None:
    assert span(("a", "l", 1, "missing")) == (6, 7, 7, 11)
    assert span(("a", "l", 1, "k")) == (6, 7, 6, 11)


def test_each_document_of_a_stream_has_its_own_ends() -> None:
    docs = load_documents("a: 1\n---\nb: [1, 2]\n", "f.yaml")
    loc = docs[1].locate(("b",))
    assert (loc.line, loc.end_line, loc.end_column) == (3, 3, 10)


def test_end_is_not_part_of_equality() -> None:
    from reconciler.core.refs import Location

    assert load_document("a: 1\n", "f").locate(("a",)) == Location("f", 1, 1, ("a",))


def test_a_file_saved_with_a_bom_has_the_same_regions() -> None:
    """Editors on Windows add a BOM; libyaml's marks skip it, so every line after the first was one off."""
    for path in [("a", "u"), ("a", "b", 1), ("a", "l"), ("z",)]:
        assert span(path, "\ufeff" + TEXT) == span(path), path


# -- the ends the libyaml reader records while reading are the ends composing the text again finds -------------


def recorded_and_recomposed(text: str) -> tuple[dict[int, int], dict[int, int]] | None:
    read = yaml_libyaml.documents_and_ends(text, MAX_NODES)
    if read is None:  # ruamel reads it, and its spans compose the text again on first use
        return None
    recomposed = {spans.pack_start(*start): spans.pack_end(*end) for start, end in spans._index(text).items()}
    return read[1], recomposed


@pytest.mark.parametrize("path", corpus(), ids=lambda p: str(p.relative_to(ROOT)))
def test_recorded_ends_are_the_recomposed_ends_on_the_project_yaml(path: Path) -> None:
    both = recorded_and_recomposed(path.read_text(encoding="utf-8"))
    if both is not None:
        assert both[0] == both[1]


@given(generated_documents())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_recorded_ends_are_the_recomposed_ends_on_generated_documents(text: str) -> None:
    both = recorded_and_recomposed(text)
    if both is not None:
        assert both[0] == both[1], text


@pytest.mark.parametrize("text", [TEXT, "\ufeff" + TEXT, TEXT.replace("\n", "\r\n"), "a: |\n  x\n\n\nb: >\n  y\n  z\n"])
def test_recorded_ends_with_block_scalars_a_bom_and_crlf(text: str) -> None:
    both = recorded_and_recomposed(text)
    assert both is not None and both[0] == both[1]


@given(st.text(alphabet=st.sampled_from(list("ab:- \n\r'\"#&*!?[]{},|>%@`~01yo.\t")), max_size=40))
@settings(max_examples=1000, deadline=None)
def test_every_odd_token_holds_one_of_the_characters_looked_for_first(text: str) -> None:
    for match in yaml_libyaml._ODD_TOKENS.finditer(text):
        assert any(c in match.group(0) for c in yaml_libyaml._ODD_TOKEN_CHARS), text
