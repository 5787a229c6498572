"""Waivers: loading with file:line errors, applying per cluster, expired and unmatched waivers once per run."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from reconciler.checks.policy.to_findings import results_to_findings
from reconciler.checks.policy.waivers import apply_waivers, load_waivers, waiver_findings
from reconciler.core.errors import UserError
from reconciler.core.refs import ObjectRef
from reconciler.findings.finding import Severity
from tests.support.policy_shared import EXAMPLES, example

TODAY = date(2026, 11, 1)


def findings(shipped):
    from reconciler.checks.policy import make_engine

    return results_to_findings(
        make_engine(shipped).evaluate(example("facts-live.json")), "prod-addon", lambda doc, path: None
    )


def test_example_file_loads() -> None:
    waivers = load_waivers((EXAMPLES / "waivers.yaml").read_text(), "kai-gitops-waivers.yaml")
    assert [w.rule for w in waivers] == ["NVCA-P-001", "NVCA-S-012"]
    assert waivers[0].line == 5 and waivers[0].cluster == "prod-addon" and waivers[1].cluster is None
    assert waivers[0].expires == date(2026, 12, 31)


def test_valid_waivers_mark_findings(shipped) -> None:
    waivers = load_waivers((EXAMPLES / "waivers.yaml").read_text(), "kai-gitops-waivers.yaml")
    out, used = apply_waivers(findings(shipped), waivers, TODAY)
    waived = {f.rule_id: f.waived_by for f in out if f.waived_by}
    assert set(waived) == {"NVCA-P-001", "NVCA-S-012"}
    assert waived["NVCA-P-001"].startswith("kai-gitops-waivers.yaml:5 (team-nvcf@example.com, until 2026-12-31)")
    assert used == {0, 1}
    assert not any(f.rule_id.startswith("KAI-W-") for f in out)
    assert waiver_findings(waivers, used, TODAY) == []


def test_expired_waiver_stops_applying_and_is_reported_once(shipped) -> None:
    waivers = load_waivers((EXAMPLES / "waivers.yaml").read_text(), "kai-gitops-waivers.yaml")
    day = date(2026, 12, 20)
    out, used = apply_waivers(findings(shipped), waivers, day)
    assert {f.rule_id for f in out if f.waived_by} == {"NVCA-P-001"}
    assert used == {0} and not any(f.rule_id.startswith("KAI-W-") for f in out)
    [expired] = waiver_findings(waivers, used, day)
    assert expired.rule_id == "KAI-W-001" and expired.severity is Severity.WARNING
    assert "expired on 2026-12-15" in expired.message
    assert str(expired.location) == "kai-gitops-waivers.yaml:11"
    assert expired.cluster == "(repository)"


def test_unmatched_waiver_is_info(shipped) -> None:
    text = "- rule: KAI-Q-010\n  subject: Queue/default-queue\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
    waivers = load_waivers(text, "w.yaml")
    out, used = apply_waivers(findings(shipped), waivers, TODAY)
    assert used == set() and not any(f.waived_by for f in out)
    [unused] = waiver_findings(waivers, used, TODAY)
    assert unused.rule_id == "KAI-W-002" and unused.severity is Severity.INFO
    assert "matches no finding in any cluster checked" in unused.message
    assert str(unused.location) == "w.yaml:1" and unused.cluster == "(repository)"


SEVERAL = """waivers:
- rule: NVCA-S-012
  subject: '*'
  reason: r
  owner: o
  expires: 2027-01-01
- rule: NVCA-P-*
  subject: '*'
  cluster: prod-addon
  reason: r
  owner: o
  expires: 2027-01-01
- rule: NVCA-P-001
  subject: '*'
  cluster: staging
  reason: r
  owner: o
  expires: 2026-01-01
"""


def test_usage_and_expiry_are_decided_once_over_all_clusters(shipped) -> None:
    """A waiver without `cluster:` used in one cluster is not "unused" because another cluster lacks the
    finding, and an expired waiver is reported once, not once per cluster."""
    waivers = load_waivers(SEVERAL, "w.yaml")
    prod, used_prod = apply_waivers(findings(shipped), waivers, TODAY, cluster="prod-addon")
    lab, used_lab = apply_waivers(
        [replace(f, cluster="lab") for f in findings(shipped) if f.rule_id != "NVCA-S-012"],
        waivers,
        TODAY,
        cluster="lab",
    )
    assert used_prod == {0, 1} and used_lab == set()
    assert {f.rule_id for f in prod if f.waived_by} >= {"NVCA-S-012", "NVCA-P-001"}
    assert not any(f.waived_by for f in lab if f.rule_id.startswith("NVCA-P-"))  # scoped to prod-addon
    verdict = waiver_findings(waivers, used_prod | used_lab, TODAY)
    assert [(f.rule_id, str(f.location)) for f in verdict] == [("KAI-W-001", "w.yaml:13")]


def test_waivers_of_clusters_the_run_did_not_check_are_not_judged(shipped) -> None:
    waivers = load_waivers(SEVERAL, "w.yaml")
    _, used = apply_waivers([], waivers, TODAY, cluster="prod-addon")
    verdict = waiver_findings(waivers, used, TODAY, clusters=["prod-addon"])
    assert [(f.rule_id, str(f.location)) for f in verdict] == [("KAI-W-002", "w.yaml:2"), ("KAI-W-002", "w.yaml:7")]
    assert "in cluster prod-addon" in verdict[1].message


def test_waivers_for_other_clusters_are_ignored(shipped) -> None:
    text = "waivers:\n- rule: '*'\n  subject: '*'\n  cluster: staging\n  reason: r\n  owner: o\n  expires: 2030-01-01\n"
    out, used = apply_waivers(findings(shipped), load_waivers(text, "w.yaml"), TODAY, cluster="prod-addon")
    assert not any(f.waived_by for f in out) and used == set()


def test_wildcards_and_subjectless_findings(shipped) -> None:
    text = "- rule: NVCA-S-*\n  subject: '*'\n  reason: r\n  owner: o\n  expires: '2027-01-01'\n"
    out, _ = apply_waivers(findings(shipped), load_waivers(text, "w.yaml"), TODAY)
    assert {f.rule_id for f in out if f.waived_by} == {"NVCA-S-012", "NVCA-S-014"}


def test_one_waiver_matches_the_release_in_policy_and_drift_findings(shipped) -> None:
    """Rego rules and the Python differ name the KAI release with the same subject."""
    from reconciler.findings.finding import Finding, Kind

    release = ObjectRef("helm.sh/v3", "HelmRelease", "kai-scheduler", "kai-scheduler")
    drift = Finding(
        rule_id="KAI-D-001",
        kind=Kind.DRIFT,
        severity=Severity.WARNING,
        message="m",
        cluster="prod-addon",
        subject=release,
    )
    text = (
        "- rule: '*'\n  subject: HelmRelease/kai-scheduler/kai-scheduler\n  reason: r\n  owner: o\n"
        "  expires: 2027-01-01\n"
    )
    out, used = apply_waivers([*findings(shipped), drift], load_waivers(text, "w.yaml"), TODAY)
    waived = {f.rule_id for f in out if f.waived_by}
    assert {"KAI-R-012", "KAI-R-013", "KAI-D-001"} <= waived and used == {0}


def test_subject_mapping_form() -> None:
    text = "- rule: X\n  subject: {kind: Pod, namespace: ns, name: p}\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
    [w] = load_waivers(text, "w.yaml")
    assert w.subject == "Pod/ns/p"
    assert w.matches(replace(_finding(), subject=ObjectRef("v1", "Pod", "p", "ns")))


def _finding():
    from reconciler.findings.finding import Finding, Kind

    return Finding(rule_id="X", kind=Kind.VIOLATION, severity=Severity.INFO, message="m", cluster="c")


def test_already_waived_findings_keep_their_waiver() -> None:
    text = "- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
    out, used = apply_waivers([replace(_finding(), waived_by="earlier")], load_waivers(text, "w.yaml"), TODAY)
    assert out[0].waived_by == "earlier" and used == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-13-01\n",
            "w.yaml:5: waiver 1: expires '2027-13-01' is not a date YYYY-MM-DD",
        ),
        ("- rule: X\n  subject: '*'\n  reason: r\n  expires: 2027-01-01\n", "w.yaml:1: waiver 1: missing owner"),
        (
            "- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n"
            "- rule: Y\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n  ticket: 5\n",
            "w.yaml:11: waiver 2: unknown key 'ticket'",
        ),
        (
            "- rule: X\n  subject: default-queue\n  reason: r\n  owner: o\n  expires: 2027-01-01\n",
            "w.yaml:2: waiver 1: subject 'default-queue' must be Kind/name",
        ),
        ("waivers: [\n  {rule: X,\n", "w.yaml:3:1: invalid YAML"),
        ("rules: []\n", "w.yaml:1: unknown top-level key 'rules'"),
        ("- just a string\n", "w.yaml:1: waiver 1 must be a mapping"),
        (
            "- rule: X\n  subject: '*'\n  cluster: 2024\n  reason: r\n  owner: o\n  expires: 2027-01-01\n",
            "w.yaml:3: waiver 1: cluster must be a cluster name (a string), got the number 2024",
        ),
        (
            "- rule: X\n  subject: '*'\n  reason: r\n  owner: o\n  expires: 2027-01-01\n  cluster: [a, b]\n",
            "w.yaml:6: waiver 1: cluster must be a cluster name (a string), got a list",
        ),
        (
            "- rule: X\n  subject: '*'\n  cluster: true\n  reason: r\n  owner: o\n  expires: 2027-01-01\n",
            "w.yaml:3: waiver 1: cluster must be a cluster name (a string), got a boolean",
        ),
    ],
)
def test_bad_file_names_file_and_line(text: str, expected: str) -> None:
    with pytest.raises(UserError) as err:
        load_waivers(text, "w.yaml")
    assert err.value.line().startswith(expected)


def test_empty_file_means_no_waivers() -> None:
    assert load_waivers("", "w.yaml") == [] and load_waivers("waivers:\n", "w.yaml") == []


def test_non_utf8_file_is_one_line_with_file_and_line() -> None:
    raw = "- rule: X\n  subject: '*'\n  reason: caf\u00e9\n".encode("latin-1")
    with pytest.raises(UserError) as err:
        load_waivers(raw, "w.yaml")
    assert err.value.line().startswith("w.yaml:3: not valid UTF-8 (byte 0xe9)")
    assert "\n" not in err.value.line()


def test_utf8_bytes_load_like_text() -> None:
    text = "- rule: X\n  subject: '*'\n  reason: caf\u00e9\n  owner: o\n  expires: 2027-01-01\n"
    assert load_waivers(text.encode(), "w.yaml") == load_waivers(text, "w.yaml")
