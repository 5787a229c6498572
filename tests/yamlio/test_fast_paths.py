"""The fleet-speed paths give the same answers as the slow ones (issue 10, part 2).

- YAML: the libyaml reader (reconciler/yamlio/libyaml.py) against the ruamel reader on every YAML file of
  the project and on generated documents full of Helm's traps: same data, same types, same positions,
  and where ruamel refuses a document the fast reader declines it (so the error is ruamel's, unchanged).
- The parse cache: one parse per distinct (file, content), shared documents never modified by a run.
- regorus: one warmed engine per thread gives the results a fresh clone gives, in any order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.core.errors import UserError
from reconciler.yamlio import document as yamldoc
from reconciler.yamlio import libyaml as yaml_libyaml
from reconciler.yamlio.document import MAX_NODES, load_documents, ruamel_documents
from tests.support.helpers import (
    DEMO_SNAPSHOTS,
    ROOT,
    assert_one_line_error,
    load_demo_builder,
    load_fleet_builder,
    run_cli,
    timeless,
)
from tests.support.yamlio_fast_paths import corpus, corpus_texts, documents, typed

# ruamel warns about reused anchors in generated documents; that is ruamel's business, not this test's.
pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")


# Valid YAML that ruamel 0.19 fails on by its own bugs (found by fuzzing): an assertion or "overlap in
# comment" in its comment handling, a second `...` document end, and a block scalar whose leading blank line
# holds fewer spaces than its auto-detected indentation. libyaml and go-yaml (Helm) read these, so the fast
# reader does too; no answer of ruamel's to copy here.
RUAMEL_BUGS = (
    "the YAML parser failed (AssertionError)",
    "overlap in comment",
    "expected the node content, but found '<document end>'",
    "more indented follow up line than first in a block scalar",
)


def reference(text: str) -> Any:
    try:
        return [(typed(d.data), d.positions) for d in ruamel_documents(text, "f.yaml")]
    except UserError as exc:
        return ("error", exc.line())


def assert_same(text: str) -> bool:
    """True when the fast reader read it (False: it declined, and ruamel reads it)."""
    got, want = fast(text), reference(text)
    if got is None:
        return False
    if isinstance(want, tuple) and any(bug in want[1] for bug in RUAMEL_BUGS):
        return True
    assert got == want, text
    return True


def fast(text: str) -> Any:
    docs = yaml_libyaml.documents(text, MAX_NODES)
    return None if docs is None else [(typed(data), positions) for data, positions in docs]


# -- the project's own YAML ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", corpus(), ids=lambda p: str(p.relative_to(ROOT)))
def test_corpus_file_reads_the_same(path: Path) -> None:
    try:
        text = yamldoc.decode_text(path.read_bytes(), path.name)
    except UserError:
        pytest.skip("not UTF-8: refused before either reader runs")
    assert_same(text)


def test_fast_reader_reads_nearly_all_of_the_corpus_itself() -> None:
    read = declined = 0
    for _, text in corpus_texts():
        if fast(text) is None:
            declined += 1
        else:
            read += 1
    assert read > 10 * max(declined, 1), (read, declined)


# -- Helm's traps, one by one ----------------------------------------------------------------------------------------

TRAPS = [
    "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: true\nh: False\n",
    "a: 'yes'\nb: \"on\"\nc: |\n  yes\nd: >\n  no\n",
    "a: 010\nb: 0o17\nc: 0x1F\nd: 0b101\ne: 1_000\nf: +12\ng: -0\n",
    "a: 1e3\nb: 1.5\nc: .5\nd: -.inf\ne: .NaN\nf: 1_0.5_0\ng: 6.02E+23\n",
    "a: 12345678901234567890\nb: -9223372036854775808\nc: 9223372036854775807\nd: 9223372036854775808\n",
    "a: 2027-13-01\nb: 2024-01-01T10:00:00Z\nc: 12:30:00\nd: 1:20\n",
    "a:\nb: ~\nc: null\nd: NULL\ne: ''\n",
    "1: one\nyes: two\n~: three\n2.5: four\n'x': five\n",
    "a: &v yes\nb: *v\nc: &m {x: 1, y: [1, 2]}\nd: *m\ne: &t true\nf: *t\n",
    "a: &v yes\nb: &m {x: 1, y: [1, 2]}\nc: &t 010\n",
    "list:\n  - a\n  -   b\n  - {k: v}\n  - [1, 2]\n  -\n    - nested\n",
    "# comment\nkey: value # trailing\n\n\nother:   spaced\n",
    "---\na: 1\n---\n---\nb: 2\n...\n",
    "just a scalar\n",
    "- top\n- level\n",
    "unicode: ünïcödé\nkey_ü: wert\nemoji: \U0001f680 x\n",
    "a: 1\r\nb:\r\n  c: 2\r\n",
    "\ufeffa: bom\n",
    "a: 1\na: 2\n",
    "a: 1\nyes: 2\ntrue: 3\n",
    "1: a\n'1': b\n",
    "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",
    "a: !!str yes\nb: !!int '3'\n",
    "a: ! yes\n",
    "%YAML 1.1\n---\na: 010\n",
    "a: _\n",
    "a: 0x_\n",
    "a: =\n",
    "? [complex]\n: key\n",
    "a: [1, 2\n",
    "a: b: c\n",
    "\ta: tab\n",
    "a: 'unterminated\n",
    "a: &x [*x]\n",
    "a: *undefined\n",
    "bomb: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
    "a: \"esc \\t \\u00e9 \\x41\"\nb: 'it''s'\nc: plain\n  continued\n",
    'key with spaces: 1\n"quoted key": 2\n',
    "a: [yes, no, ~, 1, 1.0, '1']\nb: {on: off}\n",
    "a: -\nb: - x\n",
    "? a\n: 1\n",
    "a: &x |#\n",
    "a: &x >1#\n  b\n",
    "- &x |#\n",
    "--- |#\n",
    "a: |#\n",
    "a: &x |\n  ok\n",
]


@pytest.mark.parametrize("text", TRAPS)
def test_trap_reads_the_same_or_is_left_to_ruamel(text: str) -> None:
    assert_same(text)


ORDINARY = [
    t
    for t in TRAPS
    if t.startswith(
        (
            "a: yes",
            "a: 010",
            "a: 1e3",
            "1: one",
            "a: &v yes\nb: &m",
            "list:",
            "\ufeff",
            "a: 1\r\n",
            "unicode",
            "---\na: 1",
            "a: 12345",
        )
    )
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_traps_are_read_by_the_fast_reader(text: str) -> None:
    assert len(ORDINARY) == 11
    assert assert_same(text), "declined: the fast path would not be taken"


@pytest.mark.parametrize("text", ["- \n\n| #c.5", "a:  #c\r\n> #c\n\n", "a: 1\n...\n...\n"])
def test_what_ruamel_fails_on_by_its_own_bugs_is_one_line_naming_the_file(text: str) -> None:
    """The ruamel reader (KAI_GITOPS_YAML_READER=ruamel, or no libyaml) used to crash on the first one."""
    with pytest.raises(UserError) as raised:
        ruamel_documents(text, "f.yaml")
    assert re.match(r"f\.yaml(:\d+)*: invalid YAML: ", raised.value.line()), raised.value.line()
    assert any(bug in raised.value.line() for bug in RUAMEL_BUGS)
    assert fast(text) is not None  # what libyaml and Helm read


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('a: "x\\ud800y"\n', "f.yaml:1:1"),
        ('b:\n  - "\\udfff"\n', "f.yaml:2:5"),
        ('"k\\ud83d\\ude80": 1\n', "f.yaml:1:1"),
    ],
)
def test_a_lone_surrogate_escape_is_refused_like_helm_does(text: str, where: str) -> None:
    """ruamel took it, and then every output format crashed writing it (UTF-8 cannot carry it)."""
    assert fast(text) is None  # libyaml refuses it, as go-yaml does
    with pytest.raises(UserError) as raised:
        load_documents(text, "f.yaml")
    assert raised.value.line().startswith(f"{where}: invalid YAML: ") and "surrogate" in raised.value.line()


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "a: 1\nyes: 2\ntrue: 3\n", "1: a\n'1': b\n"])
def test_duplicates_are_errors_naming_both_lines_in_both_readers(text: str) -> None:
    with pytest.raises(UserError, match=r"duplicate key .* at lines \d+ and \d+"):
        load_documents(text, "f.yaml")
    assert fast(text) is None


# -- generated documents ---------------------------------------------------------------------------------------------


@given(documents())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_documents_read_the_same(text: str) -> None:
    assert_same(text)


@given(st.text(alphabet=st.sampled_from(list("ab:- \n'\"#&*!?[]{},|>%@`~01yo.\t")), max_size=40))
@settings(max_examples=400, deadline=None)
def test_arbitrary_text_reads_the_same_or_is_left_to_ruamel(text: str) -> None:
    assert_same(text)


TOKENS = [
    "a",
    "b",
    ": ",
    "- ",
    "&x ",
    "&y",
    "*x",
    "|",
    ">",
    "#",
    " ",
    "\n",
    "  ",
    "-",
    "+",
    "1",
    "2",
    "'",
    '"',
    "[",
    "]",
    "{",
    "}",
    ",",
    "?",
    "!",
    "%",
    "yes",
    "~",
    "0x1",
    "---",
    "...",
    "\t",
    "\r\n",
]


@given(st.lists(st.sampled_from(TOKENS), max_size=25).map("".join))
@settings(max_examples=400, deadline=None)
def test_token_soup_reads_the_same_or_is_left_to_ruamel(text: str) -> None:
    assert_same(text)


SMALL_CORPUS = [p.read_text() for p in corpus() if p.stat().st_size < 3000 and b"\r" not in p.read_bytes()]
EDIT_CHARS = list(" \n:-'\"#[]{},|>&*!?yesno01.~_=")


@st.composite
def edited_corpus_files(draw: Any) -> str:
    """A real file of the project with a few characters inserted, deleted or replaced: realistic near-misses."""
    chars = list(draw(st.sampled_from(SMALL_CORPUS)))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(chars)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        if op == "insert":
            chars.insert(pos, draw(st.sampled_from(EDIT_CHARS)))
        elif pos < len(chars):
            chars[pos : pos + 1] = [] if op == "delete" else [draw(st.sampled_from(EDIT_CHARS))]
    return "".join(chars)


@given(edited_corpus_files())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_edited_project_files_read_the_same(text: str) -> None:
    assert_same(text)


def test_a_block_scalar_after_a_short_blank_line_reads_as_helm_reads_it() -> None:
    """Found by the fuzzing above (a CI run could have drawn it): ruamel refuses this, libyaml and Helm do not."""
    text = "config.yaml: |\n  \n    cluster: a\n"
    assert fast(text)[0][0] == [("config.yaml", ("str", "\ncluster: a\n"))]
    assert assert_same(text)


# -- the switch and the fallback ---------------------------------------------------------------------------------


def test_reader_engine_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert yamldoc.reader_engine() == "libyaml"
    monkeypatch.setenv("KAI_GITOPS_YAML_READER", "ruamel")
    assert yamldoc.reader_engine() == "ruamel"


def test_without_libyaml_ruamel_reads_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_libyaml, "CSafeLoader", None)
    monkeypatch.setenv("KAI_GITOPS_PARSE_CACHE", "0")
    assert yamldoc.reader_engine() == "ruamel"
    assert yaml_libyaml.documents("a: 1\n", MAX_NODES) is None
    assert load_documents("a: yes\n", "f.yaml")[0].data == {"a": True}


# -- the parse cache --------------------------------------------------------------------------------------------


def test_each_distinct_file_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = yamldoc._parse
    monkeypatch.setattr(yamldoc, "_parse", lambda text, file, budget: calls.append(file) or real(text, file, budget))
    text = "cache: test-each-distinct-file\n"
    first = load_documents(text, "one.yaml", shared=True)
    assert load_documents(text.encode(), "one.yaml", shared=True)[0] is first[0]
    load_documents(text, "two.yaml", shared=True)  # another name: its errors name it
    load_documents(text + "more: 1\n", "one.yaml", shared=True)  # another content
    assert calls == ["one.yaml", "two.yaml", "one.yaml"]
    assert load_documents(text, "one.yaml")[0] is not first[0]  # not shared: the caller's own copy
    monkeypatch.setenv("KAI_GITOPS_PARSE_CACHE", "0")
    load_documents("uncached: 1\n", "three.yaml", shared=True)
    load_documents("uncached: 1\n", "three.yaml", shared=True)
    assert calls[-2:] == ["three.yaml", "three.yaml"]


def assert_cache_as_parsed() -> None:
    assert yamldoc._PARSED
    for (file, text), docs in list(yamldoc._PARSED.items()):
        again = ruamel_documents(text, file)
        assert [(typed(d.data), d.positions) for d in docs] == [(typed(d.data), d.positions) for d in again], file


def test_a_check_run_leaves_the_shared_documents_as_parsed(tmp_path: Path) -> None:
    repo = tmp_path / "fleet"
    load_fleet_builder().write_fleet_repo(repo, 8)
    first = run_cli(["check", "--repo", repo, "-o", "json"])
    assert_cache_as_parsed()
    assert same_report(run_cli(["check", "--repo", repo, "-o", "json"]), first)


@pytest.mark.parametrize("cluster", ["prod-addon", "lab-standalone"])
def test_diff_and_doctor_leave_the_shared_documents_as_parsed(tmp_path: Path, cluster: str) -> None:
    repo = tmp_path / "demo"
    load_demo_builder().build_repo(repo)
    snapshot = DEMO_SNAPSHOTS / f"{cluster}.yaml"
    for command in ("diff", "doctor"):
        args = [command, "--repo", repo, "--cluster", cluster, "--snapshot", snapshot, "-o", "json"]
        first = run_cli(args)
        assert first[0] == 2, first[2]
        assert_cache_as_parsed()
        assert same_report(run_cli(args), first)


def same_report(run: tuple[int, str, str], other: tuple[int, str, str]) -> bool:
    """Two runs' exit codes, logs and JSON reports are the same, but for when each run started."""
    return (run[0], run[2], timeless(json.loads(run[1]))) == (other[0], other[2], timeless(json.loads(other[1])))


# -- regorus: a kept engine ------------------------------------------------------------------------------------


def test_warmed_engine_gives_what_a_fresh_clone_gives(tmp_path: Path) -> None:
    from reconciler.app.pipeline import desired_clusters, open_desired
    from reconciler.app.policy_run import engine_for
    from reconciler.app.settings import GitSettings, PolicySettings
    from reconciler.checks.facts import build_facts
    from reconciler.checks.policy.regorus_engine import RegorusEngine

    repo_path = tmp_path / "fleet"
    load_fleet_builder().write_fleet_repo(repo_path, 16)
    repo = open_desired(GitSettings(str(repo_path)))
    facts = [build_facts(d.name, d, None, None) for d in desired_clusters(repo, None)]
    policy_set = engine_for(repo, PolicySettings())._set  # type: ignore[attr-defined]
    fresh = [RegorusEngine(policy_set).evaluate_tree(f) for f in facts]
    assert any(json.dumps(tree).count('"message"') for tree in fresh), "the fleet must have findings"
    kept = RegorusEngine(policy_set)
    order = [*range(len(facts)), *reversed(range(len(facts)))]
    assert [kept.evaluate_tree(facts[i]) for i in order] == [fresh[i] for i in order]


# -- deep_merge: one copy per value, same result as the deepcopy-based original ------------------------------


def reference_merge(base: Any, override: Any) -> Any:
    """The original implementation (copy.deepcopy of base, then of each override), kept as the oracle."""
    import copy

    if not isinstance(base, dict) or not isinstance(override, dict):
        return copy.deepcopy(override)
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = reference_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=4),
    max_leaves=12,
)


@given(values, values)
@settings(max_examples=300, deadline=None)
def test_deep_merge_matches_the_deepcopy_original_and_shares_nothing(base: Any, override: Any) -> None:
    from reconciler.model.values import deep_merge

    before = json.dumps([base, override])
    merged = deep_merge(base, override)
    want = reference_merge(base, override)
    assert json.dumps(merged) == json.dumps(want)  # same values, same key order
    if isinstance(merged, dict | list):
        _scribble(merged)
        assert json.dumps([base, override]) == before  # the result shares nothing with its inputs


def test_a_copy_of_subclassed_collections_is_plain_and_shares_nothing() -> None:
    """Plain types are told apart by their exact type; a subclass (ruamel's CommentedMap) takes the long way."""
    from collections import OrderedDict

    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from reconciler.model.values import copy_values

    class Word(str):
        pass

    inner = CommentedSeq([OrderedDict(a=[1.5, True, None]), Word("w")])
    original = CommentedMap(x=inner)
    copied = copy_values(original)
    assert copied == {"x": [{"a": [1.5, True, None]}, "w"]}
    assert type(copied) is dict and type(copied["x"]) is list and type(copied["x"][0]) is dict
    copied["x"][0]["a"].append(2)
    assert inner[0]["a"] == [1.5, True, None]


def _scribble(value: Any) -> None:
    if isinstance(value, dict):
        for key in list(value):
            _scribble(value[key])
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


def test_unknown_reader_name_is_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "fleet"
    load_fleet_builder().write_fleet_repo(repo, 2)
    monkeypatch.setenv("KAI_GITOPS_YAML_READER", "ruaml")
    monkeypatch.setenv("KAI_GITOPS_PARSE_CACHE", "0")
    assert_one_line_error(*run_cli(["check", "--repo", repo]), "KAI_GITOPS_YAML_READER='ruaml'", "libyaml or ruamel")
