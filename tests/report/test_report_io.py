"""Reports read back from JSON (reconciler/report/reader.py): the exact inverse of `to_dict`, for `report merge`.

Property: for any report (check with clusters and repository findings, or diff/doctor with one cluster,
sharded or not), to_dict → from_dict → to_dict is the identity, also through the JSON text the `json`
format writes (NaN/Inf as Go's strings, so the file round-trips too).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.checks.nvca import Verdict
from reconciler.core.names import object_name
from reconciler.core.refs import Location, ObjectRef, format_path
from reconciler.findings.age import Age
from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from reconciler.findings.rules import RuleMeta
from reconciler.outputs import render
from reconciler.report.reader import parse_path, report_from_dict
from reconciler.report.report import ClusterReport, GitInfo, Report
from reconciler.report.shards import Shard

text = st.text(max_size=12)
names = st.from_regex(r"[a-z]([a-z0-9-]{0,9}[a-z0-9])?", fullmatch=True)  # DNS labels, as the reader requires
paths = st.lists(st.one_of(st.integers(0, 20), st.text(min_size=1, max_size=6)), max_size=5).map(tuple)
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), text, st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=8,
)

object_names = st.text(min_size=1, max_size=12).filter(lambda name: object_name(name) is None)
subjects = st.builds(ObjectRef, text, text, object_names, st.none() | names)
positions = st.none() | st.integers(1, 500)
locations = st.builds(Location, text, positions, positions, paths, positions, positions)
fixes = st.builds(
    Fix,
    st.sampled_from(list(Action)),
    text,
    st.none() | text,
    st.none() | st.dictionaries(text, json_values, max_size=2),
)
instants = st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1)).map(
    lambda moment: moment.replace(microsecond=0, tzinfo=UTC)
)
findings = st.builds(
    Finding,
    rule_id=st.from_regex(r"KAI-[A-Z]-00[0-9]", fullmatch=True),
    kind=st.sampled_from(list(Kind)),
    severity=st.sampled_from(list(Severity)),
    message=text,
    cluster=names,
    subject=st.none() | subjects,
    location=st.none() | locations,
    desired=json_values,
    live=json_values,
    fix=st.none() | fixes,
    title=text,
    waived_by=st.none() | text,
    extra=st.dictionaries(text, json_values, max_size=3),
    age=st.none() | st.builds(Age, instants, instants),
)
verdicts = st.builds(Verdict, st.booleans(), st.lists(text, max_size=2).map(tuple), evaluated=st.booleans())
gits = st.builds(GitInfo, text, text, st.none() | st.from_regex(r"[0-9a-f]{40}", fullmatch=True), st.booleans())
metas = st.builds(
    RuleMeta,
    st.from_regex(r"KAI-[A-Z]-0[0-9][0-9]", fullmatch=True),
    text.filter(bool),
    st.sampled_from(["error", "warning", "info"]),
    st.sampled_from(["static", "live"]),
    *[text.filter(bool)] * 3,
)


def clusters(rules: list[RuleMeta]) -> Any:
    return st.builds(
        ClusterReport,
        names,
        st.none() | gits,
        st.none() | text,
        st.none() | verdicts,
        st.none() | st.dictionaries(text, json_values, max_size=2),
        st.lists(findings, max_size=4),
        st.lists(st.sampled_from(rules), unique_by=lambda m: m.id) if rules else st.just([]),
        st.none() | locations,
    )


shards = st.none() | st.integers(1, 8).flatmap(lambda n: st.builds(Shard, st.integers(1, n), st.just(n)))
changed = st.none() | st.dictionaries(text, st.frozensets(st.integers(1, 99), max_size=4), max_size=3)


@st.composite
def reports(draw: Any) -> Report:
    command = draw(st.sampled_from(["check", "diff", "doctor"]))
    count = 1 if command != "check" else draw(st.integers(0, 3))
    rules = draw(st.lists(metas, max_size=4, unique_by=lambda m: m.id))  # one meta per id, as in a run
    return Report(
        command,
        draw(st.lists(clusters(rules), min_size=count, max_size=count)),
        draw(st.sampled_from(list(Severity))),
        draw(st.lists(findings, max_size=3)),
        draw(changed),
        shard=draw(shards) if command == "check" else None,
        generated_at=draw(st.none() | instants),
    )


@given(reports())
@settings(max_examples=150, deadline=None)
def test_to_dict_from_dict_is_the_identity(report: Report) -> None:
    once = report.to_dict()
    assert report_from_dict(once).to_dict() == once


@given(reports())
@settings(max_examples=80, deadline=None)
def test_json_text_round_trips(report: Report) -> None:
    written = render(report, "json")
    assert render(report_from_dict(orjson.loads(written)), "json") == written


def test_non_finite_numbers_survive_as_go_strings() -> None:
    finding = Finding("KAI-Q-001", Kind.VIOLATION, Severity.ERROR, "m", "c", desired=math.nan, live=-math.inf)
    written = render(Report("check", [ClusterReport("c", findings=[finding])]), "json")
    again = report_from_dict(orjson.loads(written))
    assert again.clusters[0].findings[0].desired == "NaN" and render(again, "json") == written


@given(paths)
def test_parse_path_formats_back_to_the_same_text(path: tuple[Any, ...]) -> None:
    dotted = format_path(path)
    assert format_path(parse_path(dotted)) == dotted


def test_parse_path_recovers_ordinary_paths() -> None:
    assert parse_path("defaultQueue.childResources.cpu") == ("defaultQueue", "childResources", "cpu")
    assert parse_path("selfManaged.featureGateValues[2]") == ("selfManaged", "featureGateValues", 2)
    assert parse_path("[0]") == (0,) and parse_path("") == ()
