"""YAML read the way Helm reads it (go-yaml v2 booleans), with positions and one-line errors."""

from __future__ import annotations

import re
import time

import pytest

from reconciler.core.errors import UserError
from reconciler.core.refs import Location
from reconciler.yamlio.document import YamlDoc, decode_text, load_document, load_documents, ruamel_documents

HELM_TRUE = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON"]
HELM_FALSE = ["n", "N", "no", "No", "NO", "off", "Off", "OFF"]


def alias_bomb() -> str:
    """The classic "billion laughs": 9 levels of 9 aliases, 9^9 leaves once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghi"
    for i in range(1, 9):
        lines.append(f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * 9) + "]")
    return "\n".join(lines) + "\n"


# -- Helm booleans ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("word", HELM_TRUE)
def test_plain_yes_on_y_words_are_true_like_helm(word: str) -> None:
    doc = load_document(f"value: {word}\nlist: [{word}]\nblock:\n  - {word}\n", "v.yaml")
    assert doc.data == {"value": True, "list": [True], "block": [True]}
    assert doc.data["value"] is True


@pytest.mark.parametrize("word", HELM_FALSE)
def test_plain_no_off_n_words_are_false_like_helm(word: str) -> None:
    doc = load_document(f"value: {word}\nlist: [{word}]\n", "v.yaml")
    assert doc.data == {"value": False, "list": [False]}
    assert doc.data["value"] is False


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "y", "n", "true", "False"])
@pytest.mark.parametrize("quote", ["'", '"'])
def test_quoted_words_stay_strings(word: str, quote: str) -> None:
    doc = load_document(f"value: {quote}{word}{quote}\n", "v.yaml")
    assert doc.data["value"] == word
    assert isinstance(doc.data["value"], str)


@pytest.mark.parametrize("style", ["|", ">", "|-", ">-"])
def test_block_scalars_stay_strings(style: str) -> None:
    doc = load_document(f"value: {style}\n  yes\n", "v.yaml")
    assert isinstance(doc.data["value"], str)
    assert doc.data["value"].strip() == "yes"


@pytest.mark.parametrize("word", ["yEs", "oN", "nO", "Nope", "yess", "True1"])
def test_words_outside_the_go_yaml_table_stay_strings(word: str) -> None:
    assert load_document(f"value: {word}\n", "v.yaml").data["value"] == word


def test_other_scalars_keep_their_types() -> None:
    doc = load_document("t: true\nf: false\ni: -1\nz: 0\nf1: 1.5\nnil: ~\nnull2: null\ns: binpack\n", "v.yaml")
    assert doc.data == {"t": True, "f": False, "i": -1, "z": 0, "f1": 1.5, "nil": None, "null2": None, "s": "binpack"}
    assert type(doc.data["i"]) is int
    assert type(doc.data["f1"]) is float


def test_converted_data_is_plain_python() -> None:
    doc = load_document("a:\n  b: [1, 2]\n  c: {d: x}\n", "v.yaml")
    assert type(doc.data) is dict
    assert type(doc.data["a"]) is dict
    assert type(doc.data["a"]["b"]) is list
    assert type(doc.data["a"]["c"]["d"]) is str


# -- positions ----------------------------------------------------------------------------------------------


POSITIONS_YAML = """\
# comment
scheduler:
  placementStrategy: binpack
  plugins:
    nodeplacement:
      arguments: {gpu: binpack, cpu: spread}
gates:
  - SelfHosted
  - KAIScheduler
flow: [a, b]
"""


def test_positions_of_keys_are_one_based_line_and_column() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    assert doc.positions[("scheduler",)] == (2, 1)
    assert doc.positions[("scheduler", "placementStrategy")] == (3, 3)
    assert doc.positions[("scheduler", "plugins", "nodeplacement")] == (5, 5)
    assert doc.positions[("scheduler", "plugins", "nodeplacement", "arguments")] == (6, 7)
    assert doc.positions[("scheduler", "plugins", "nodeplacement", "arguments", "cpu")] == (6, 33)


def test_positions_of_list_items() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    assert doc.positions[("gates", 0)] == (8, 5)
    assert doc.positions[("gates", 1)] == (9, 5)
    assert doc.positions[("flow", 0)] == (10, 8)
    assert doc.positions[("flow", 1)] == (10, 11)


def test_locate_exact_path() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    loc = doc.locate(("scheduler", "placementStrategy"))
    assert loc == Location("values.yaml", 3, 3, ("scheduler", "placementStrategy"))
    assert str(loc) == "values.yaml:3:3"
    assert loc.dotted_path() == "scheduler.placementStrategy"


def test_locate_falls_back_to_nearest_existing_parent_but_keeps_the_asked_path() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    loc = doc.locate(("scheduler", "actions", "preempt", "enabled"))
    assert (loc.line, loc.column) == (2, 1)  # `scheduler:` is where the key would be added
    assert loc.path == ("scheduler", "actions", "preempt", "enabled")
    deeper = doc.locate(("scheduler", "plugins", "nodeplacement", "priority"))
    assert (deeper.line, deeper.column) == (5, 5)


def test_locate_of_a_completely_absent_path_points_at_the_file_start() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    loc = doc.locate(("defaultQueue", "childResources"))
    assert (loc.file, loc.line, loc.column) == ("values.yaml", 1, 1)


def test_locate_list_item_path_and_format() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    loc = doc.locate(("gates", 1))
    assert str(loc) == "values.yaml:9:5"
    assert loc.dotted_path() == "gates[1]"


def test_get_walks_mappings_and_lists() -> None:
    doc = load_document(POSITIONS_YAML, "values.yaml")
    assert doc.get(("gates", 1)) == "KAIScheduler"
    assert doc.get(("gates", -1)) == "KAIScheduler"
    assert doc.get(("gates", 5), "dflt") == "dflt"
    assert doc.get(("scheduler", "missing"), 7) == 7
    assert doc.get(("scheduler", "placementStrategy", "deeper")) is None


# -- errors -----------------------------------------------------------------------------------------------------


def test_duplicate_key_names_both_lines() -> None:
    text = "defaultQueue:\n  parentName: a\n  childName: b\n  parentName: c\n"
    with pytest.raises(UserError) as info:
        load_document(text, "kai-values.yaml")
    err = info.value
    assert err.where == "kai-values.yaml:4"
    assert 'duplicate key "parentName"' in err.message
    assert "lines 2 and 4" in err.message
    assert "\n" not in err.line()


def test_duplicate_top_level_key() -> None:
    with pytest.raises(UserError) as info:
        load_document("a: 1\nb: 2\na: 3\n", "x.yaml")
    assert info.value.line().startswith('x.yaml:3: duplicate key "a" at lines 1 and 3')


def test_duplicate_key_first_line_is_the_first_occurrence_not_the_mapping_start() -> None:
    with pytest.raises(UserError) as info:
        load_document("top:\n  x: 0\n  a: 1\n  y: 2\n  a: 2\n", "x.yaml")
    assert info.value.where == "x.yaml:5"
    assert "lines 3 and 5" in info.value.message


@pytest.mark.parametrize(
    "text, line",
    [
        ("a:\n  b: 1\n c: 2\n", 3),
        ("a: 1\nb: [1, 2\nc: 3\n", 2),  # where the bracket opens, not where the parser gave up
        ("a: 1\n\tb: 2\n", 2),
        ("a: 'unterminated\n", 1),  # where the quote opens
    ],
)
def test_malformed_yaml_names_file_line_and_column(text: str, line: int) -> None:
    with pytest.raises(UserError) as info:
        load_document(text, "clusters/lab/kai-values.yaml")
    err = info.value
    assert re.fullmatch(r"clusters/lab/kai-values\.yaml:\d+:\d+", err.where or ""), err.where
    assert int((err.where or "").split(":")[1]) == line
    assert err.message.startswith("invalid YAML: ")
    assert "\n" not in err.line()


# The common mistakes, each as the line a person reads: where the mistake is, what it is, what to do.
# None of them may carry the parser's own words ("while scanning", "cannot start any token", "<block end>").
COMMON_MISTAKES = [
    ("a:\n\tb: 1\n", "f.yaml:2:1: invalid YAML: tabs are not allowed for indentation (indent with spaces)"),
    ("a:\n  b:\n  \tc: 1\n", "f.yaml:3:3: invalid YAML: tabs are not allowed for indentation (indent with spaces)"),
    ("a:\t1\n", "f.yaml:1:3: invalid YAML: a tab cannot separate YAML tokens here (use spaces instead of the tab)"),
    (
        "url: http://x: y\n",
        "f.yaml:1:14: invalid YAML: a value contains ': ', which YAML reads as the start of "
        "another key (put the value in quotes)",
    ),
    (
        "a: 1\n  b: 2\n",
        "f.yaml:2:4: invalid YAML: this key is indented deeper than the key above it, which "
        "already has a value (line it up with its sibling keys)",
    ),
    (
        "a:\n    b: 1\n  c: 2\n",
        "f.yaml:3:3: invalid YAML: this line is indented differently from the keys of the "
        "mapping starting at line 1 (indent it exactly like the keys it belongs with)",
    ),
    (
        "a: 1\nb\nc: 2\n",
        "f.yaml:2:1: invalid YAML: this line has no ':' but sits among the keys of a mapping "
        "(write it as 'key: value', or indent it deeper if it continues the value above)",
    ),
    (
        'a: "x\nb: 2\n',
        'f.yaml:1:4: invalid YAML: the " opened here is never closed (add the closing "; a " '
        'inside the value is written \\")',
    ),
    (
        "a: [1, 2\nb: 3\n",
        "f.yaml:1:4: invalid YAML: the '[' opened here is not closed (close it with ']', or "
        "quote a value inside that contains ',', ':' or brackets)",
    ),
    (
        "a: {b: c: d}\n",
        "f.yaml:1:9: invalid YAML: expected ',' or '}' in this {…} mapping (quote a value that "
        "contains ':', ',' or brackets)",
    ),
    ("a: @x\n", "f.yaml:1:4: invalid YAML: '@' cannot start a plain YAML value (quote the value, e.g. \"@…\")"),
    (
        "a: *x\n",
        "f.yaml:1:4: invalid YAML: alias '*x' refers to no anchor '&x' before it (define '&x' earlier "
        "in this file, or quote the value if '*' is meant literally)",
    ),
    (
        "a: 1\n- b\n",
        "f.yaml:2:1: invalid YAML: a list item where the mapping starting at line 1 expects a key "
        "(indent the list under the key it belongs to)",
    ),
    (
        "a:\n  - b\n  c: d\n",
        "f.yaml:3:3: invalid YAML: a mapping key where the list starting at line 2 expects "
        "'- ' items (start it with '- ', or indent it like the key that holds the list)",
    ),
    (
        "a: - b\n",
        "f.yaml:1:4: invalid YAML: a list item cannot start on the same line as its key (put '- item' "
        "on the next line, indented under the key)",
    ),
    ('a: "x" y\n', "f.yaml:1:8: invalid YAML: unexpected text after the value (quote the whole value)"),
    (
        'a: "\\q"\n',
        "f.yaml:1:6: invalid YAML: '\\q' is not an escape in a double-quoted string (use single "
        "quotes, or write '\\\\' for a backslash)",
    ),
    (
        "a: \x07\n",
        "f.yaml:1:4: invalid YAML: control character U+0007 is not allowed in YAML (delete it, or "
        "write it as an escape inside double quotes)",
    ),
]


@pytest.mark.parametrize(("text", "expected"), COMMON_MISTAKES)
def test_common_yaml_mistakes_read_as_what_to_fix_where(text: str, expected: str) -> None:
    with pytest.raises(UserError) as info:
        load_documents(text, "f.yaml")
    assert info.value.line() == expected
    assert not re.search(r"while (scanning|parsing)|cannot start any token|<block|problem_mark", expected)


@pytest.fixture(scope="module")
def bomb_outcome() -> tuple[float, UserError | None]:
    """Load the bomb once (it is the slowest thing in this suite); tests assert on the outcome."""
    start = time.perf_counter()
    try:
        load_document(alias_bomb(), "bomb.yaml")
    except UserError as exc:
        return time.perf_counter() - start, exc
    return time.perf_counter() - start, None


def test_alias_bomb_is_refused_quickly(bomb_outcome: tuple[float, UserError | None]) -> None:
    elapsed, error = bomb_outcome
    assert error is not None
    assert elapsed < 2.0


def test_alias_bomb_is_a_one_line_error_naming_the_file_and_a_line(
    bomb_outcome: tuple[float, UserError | None],
) -> None:
    _, err = bomb_outcome
    assert err is not None
    assert re.fullmatch(r"bomb\.yaml:\d+", err.where or ""), err.where
    assert "alias bomb" in err.message
    assert "\n" not in err.line()


def test_small_legitimate_aliases_are_expanded() -> None:
    doc = load_document("base: &b {quota: -1, limit: -1}\ncpu: *b\ngpu: *b\n", "v.yaml")
    assert doc.data["cpu"] == {"quota": -1, "limit": -1}
    assert doc.data["gpu"] == doc.data["cpu"]


def test_non_utf8_names_file_and_line() -> None:
    with pytest.raises(UserError) as info:
        load_document(b"a: 1\nb: 2\nc: caf\xe9\n", "env.yaml")
    err = info.value
    assert err.where == "env.yaml:3"
    assert "UTF-8" in err.message
    assert "0xe9" in err.message


def test_decode_text_refuses_huge_files() -> None:
    from reconciler.yamlio.document import MAX_BYTES

    with pytest.raises(UserError) as info:
        decode_text(b"a" * (MAX_BYTES + 1), "big.yaml")
    assert info.value.where == "big.yaml"


# -- empty and multi-document -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "---\n"])
def test_empty_document_is_an_empty_mapping(text: str) -> None:
    doc = load_document(text, "empty.yaml")
    assert isinstance(doc, YamlDoc)
    assert doc.data == {}
    assert doc.locate(("anything",)).line == 1


def test_empty_document_can_be_refused() -> None:
    with pytest.raises(UserError) as info:
        load_document("# nothing\n", "kai-gitops.yaml", empty_ok=False)
    assert info.value.line() == "kai-gitops.yaml:1: file is empty"


def test_several_documents_refused_where_one_is_expected() -> None:
    with pytest.raises(UserError) as info:
        load_document("a: 1\n---\nb: 2\n", "v.yaml")
    assert info.value.where == "v.yaml:1"


def test_load_documents_skips_empty_documents_and_keeps_per_document_positions() -> None:
    docs = load_documents("---\n---\na: 1\n---\n# none\n---\nb:\n  c: 2\n", "multi.yaml")
    assert [d.data for d in docs] == [{"a": 1}, {"b": {"c": 2}}]
    assert docs[0].positions[("a",)] == (3, 1)
    assert docs[1].positions[("b", "c")] == (8, 3)
    assert all(d.file == "multi.yaml" for d in docs)


def test_timestamps_stay_text_and_a_bad_date_is_not_a_crash() -> None:
    doc = load_document("a: 2026-12-31\nb: 2026-12-31T10:00:00Z\nc: 2027-13-01\n", "v.yaml")
    assert doc.data == {"a": "2026-12-31", "b": "2026-12-31T10:00:00Z", "c": "2027-13-01"}


def test_a_tagged_value_before_a_failing_one_leaves_no_exception_for_exit() -> None:
    """ruamel's construct_unknown turned its generator's close() into a ConstructorError, which Python printed at
    exit ("Exception ignored in: <generator …>", a traceback) after the one-line error."""
    import gc
    import sys

    ignored: list[BaseException | None] = []
    previous, sys.unraisablehook = sys.unraisablehook, lambda u: ignored.append(u.exc_value)
    try:
        for text in ("- !!str 1\n- !!int x\n", "- !!str [1]\n- !!int x\n", "a: !!str {b: 1}\nc: !!int x\n"):
            with pytest.raises(UserError, match="invalid literal for int"):
                ruamel_documents(text, "f.yaml")
            gc.collect()
    finally:
        sys.unraisablehook = previous
    assert ignored == []
    assert [d.data for d in ruamel_documents("- !!str 1\n- !!str [1]\n- !!str {a: 1}\n", "f.yaml")] == [
        ["1", [1], {"a": 1}]
    ]
