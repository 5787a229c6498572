"""Every shipped rule fires through the Python engine from an example facts document (bent as needed)."""

from __future__ import annotations

import pytest

from reconciler.checks.policy import make_engine
from tests.support.policy_rules import NOT_INSTALLED, TRIGGERS, live, standalone
from tests.support.policy_shared import example


@pytest.mark.parametrize("rule_id", sorted(TRIGGERS))
def test_rule_fires(shipped, rule_id: str) -> None:
    results = make_engine(shipped).evaluate(TRIGGERS[rule_id])
    fired = [r for r in results if r.rule.id == rule_id]
    assert fired, f"{rule_id} did not fire; got {sorted({r.rule.id for r in results})}"
    assert all(r.message and r.rule.severity in ("error", "warning", "info") for r in fired)


def test_every_shipped_rule_has_a_trigger(shipped) -> None:
    assert set(shipped.rules) == set(TRIGGERS)


@pytest.mark.parametrize("name", ["facts-static-addon.json", "facts-live-healthy.json", "facts-static-workloads.json"])
def test_clean_examples_have_no_findings(shipped, name: str) -> None:
    assert make_engine(shipped).evaluate(example(name)) == []


def test_prediction_finding_carries_nvca_exact_string(shipped) -> None:
    facts = live()
    [result] = [r for r in make_engine(shipped).evaluate(facts) if r.rule.id == "NVCA-H-002"]
    assert result.message == facts["live"]["nvca_prediction"]["errors"][0]
    assert str(result.subject) == "Queue/default-parent-queue"


def test_crd_rule_uses_nvca_words_once(shipped) -> None:
    results = make_engine(shipped).evaluate(TRIGGERS["NVCA-H-001"])
    assert [r.message for r in results if r.message == NOT_INSTALLED] == [NOT_INSTALLED]


def test_static_findings_point_into_git(shipped) -> None:
    results = make_engine(shipped).evaluate(standalone())
    typo = next(r for r in results if r.rule.id == "NVCA-G-005")
    assert (typo.doc, typo.path) == ("nvca_values", ("selfManaged", "featureGateValues", 1))
    assert '"KAIScheduler"' in typo.message


def test_stricter_than_nvca_rules_say_so(shipped) -> None:
    for rule_id in ("KAI-Q-010", "KAI-Q-011"):
        assert "stricter than NVCA" in shipped.rules[rule_id].rationale
        assert any(
            "stricter than NVCA" in r.message
            for r in make_engine(shipped).evaluate(TRIGGERS[rule_id])
            if r.rule.id == rule_id
        )


def test_pods_are_never_patched(shipped) -> None:
    for r in make_engine(shipped).evaluate(live()):
        if r.subject and r.subject.kind == "Pod" and r.fix:
            assert "patch" not in r.fix and "delete" not in r.fix


def test_the_rule_tables_name_every_rule(shipped) -> None:
    """policies/README.md lists every shipped Rego rule; docs/policies.md names every built-in one."""
    from reconciler.findings.builtin_rules import BY_ID
    from tests.support.helpers import ROOT

    table = (ROOT / "policies" / "README.md").read_text()
    listed = {
        line.split("|")[1].strip() for line in table.splitlines() if line.startswith(("| KAI-", "| NVCA-", "| NVCF-"))
    }
    assert listed == set(shipped.rules)
    page = (ROOT / "docs" / "policies.md").read_text()
    assert [rule for rule in BY_ID if f"`{rule}`" not in page] == []
