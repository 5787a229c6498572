"""Waivers: loading with file:line errors, applying, expired and unmatched waivers."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from reconciler.checks.policy.to_findings import results_to_findings
from reconciler.checks.policy.waivers import apply_waivers, load_waivers
from reconciler.errors import UserError
from reconciler.findings import Severity
from reconciler.model.refs import ObjectRef
from tests.policy.conftest import EXAMPLES, example

TODAY = date(2026, 11, 1)


def findings(shipped):
    from reconciler.checks.policy import make_engine

    return results_to_findings(make_engine(shipped).evaluate(example("facts-live.json")), "prod-addon",
                               lambda doc, path: None)


def test_example_file_loads() -> None:
    waivers = load_waivers((EXAMPLES / "waivers.yaml").read_text(), "kai-gitops-waivers.yaml")
    assert [w.rule for w in waivers] == ["NVCA-P-001", "NVCA-S-012"]
    assert waivers[0].line == 5 and waivers[0].cluster == "prod-addon" and waivers[1].cluster is None
    assert waivers[0].expires == date(2026, 12, 31)


def test_valid_waivers_mark_findings(shipped) -> None:
    waivers = load_waivers((EXAMPLES / "waivers.yaml").read_text(), "kai-gitops-waivers.yaml")
    out = apply_waivers(findings(shipped), waivers, TODAY)
    waived = {f.rule_id: f.waived_by for f in out if f.waived_by}
    assert set(waived) == {"NVCA-P-001", "NVCA-S-012"}
    assert waived["NVCA-P-001"].startswith("kai-gitops-waivers.yaml:5 (team-nvcf@example.com, until 2026-12-31)")
    assert not any(f.rule_id.startswith("KAI-W-") for f in out)


def test_expired_waiver_stops_applying_and_is_reported(shipped) -> None:
    waivers = load_waivers((EXAMPLES / "waivers.yaml").read_text(), "kai-gitops-waivers.yaml")
    out = apply_waivers(findings(shipped), waivers, date(2026, 12, 20))
    assert {f.rule_id for f in out if f.waived_by} == {"NVCA-P-001"}
    [expired] = [f for f in out if f.rule_id == "KAI-W-001"]
    assert expired.severity is Severity.WARNING
    assert "expired on 2026-12-15" in expired.message
    assert str(expired.location) == "kai-gitops-waivers.yaml:11"


def test_unmatched_waiver_is_info(shipped) -> None:
    text = "- rule: KAI-Q-010\n  subject: Queue/default-queue\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
    out = apply_waivers(findings(shipped), load_waivers(text, "w.yaml"), TODAY)
    [unused] = [f for f in out if f.rule_id == "KAI-W-002"]
    assert unused.severity is Severity.INFO and "matches no finding" in unused.message


def test_waivers_for_other_clusters_are_ignored(shipped) -> None:
    text = ("waivers:\n- rule: '*'\n  subject: '*'\n  cluster: staging\n  reason: r\n  owner: o\n"
            "  expires: 2020-01-01\n")
    out = apply_waivers(findings(shipped), load_waivers(text, "w.yaml"), TODAY, cluster="prod-addon")
    assert not any(f.waived_by for f in out) and not any(f.rule_id.startswith("KAI-W-") for f in out)


def test_wildcards_and_subjectless_findings(shipped) -> None:
    text = "- rule: NVCA-S-*\n  subject: '*'\n  reason: r\n  owner: o\n  expires: '2027-01-01'\n"
    out = apply_waivers(findings(shipped), load_waivers(text, "w.yaml"), TODAY)
    assert {f.rule_id for f in out if f.waived_by} == {"NVCA-S-012", "NVCA-S-014"}


def test_subject_mapping_form() -> None:
    text = ("- rule: X\n  subject: {kind: Pod, namespace: ns, name: p}\n  reason: r\n  owner: o\n"
            "  expires: 2027-01-01\n")
    [w] = load_waivers(text, "w.yaml")
    assert w.subject == "Pod/ns/p"
    assert w.matches(replace(_finding(), subject=ObjectRef("v1", "Pod", "p", "ns")))


def _finding():
    from reconciler.findings import Finding, Kind

    return Finding(rule_id="X", kind=Kind.VIOLATION, severity=Severity.INFO, message="m", cluster="c")


def test_already_waived_findings_keep_their_waiver() -> None:
    text = "- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
    out = apply_waivers([replace(_finding(), waived_by="earlier")], load_waivers(text, "w.yaml"), TODAY)
    assert out[0].waived_by == "earlier"


@pytest.mark.parametrize(("text", "expected"), [
    ("- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-13-01\n",
     "w.yaml:5: waiver 1: expires '2027-13-01' is not a date YYYY-MM-DD"),
    ("- rule: X\n  subject: '*'\n  reason: r\n  expires: 2027-01-01\n", "w.yaml:1: waiver 1: missing owner"),
    ("- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
     "- rule: Y\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n  ticket: 5\n",
     "w.yaml:11: waiver 2: unknown key 'ticket'"),
    ("- rule: X\n  subject: default-queue\n  reason: r\n  owner: o\n  expires: 2027-01-01\n",
     "w.yaml:2: waiver 1: subject 'default-queue' must be Kind/name"),
    ("waivers: [\n  {rule: X,\n", "w.yaml:3: invalid YAML"),
    ("rules: []\n", "w.yaml:1: unknown top-level key 'rules'"),
    ("- just a string\n", "w.yaml:1: waiver 1 must be a mapping"),
])
def test_bad_file_names_file_and_line(text: str, expected: str) -> None:
    with pytest.raises(UserError) as err:
        load_waivers(text, "w.yaml")
    assert err.value.line().startswith(expected)


def test_empty_file_means_no_waivers() -> None:
    assert load_waivers("", "w.yaml") == [] and load_waivers("waivers:\n", "w.yaml") == []
