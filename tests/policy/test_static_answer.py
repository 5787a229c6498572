"""The PR check's static scope asks regorus for the static rules' violations only (regorus_engine.add_static_answer):
the results must be those of the whole pack's evaluation filtered to the static rules, shipped and custom."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.checks.policy import load_policy_set
from reconciler.checks.policy.pack import collect_results
from reconciler.checks.policy.regorus_engine import RegorusEngine
from reconciler.findings.rules import Scope
from tests.support.policy_shared import example

STATIC_EXAMPLES = ("facts-static-addon.json", "facts-static-standalone.json", "facts-static-workloads.json")

CUSTOM_STATIC_RULE = """package kai_gitops.rules.user.acme.release_prefix

import rego.v1

meta := {
	"id": "ACME-R-001",
	"title": "Every cluster names its KAI release",
	"severity": "warning",
	"scope": "static",
	"rationale": "Acme's inventory reads it.",
	"remediation": "Set kaiReleaseName.",
	"source": "Acme platform handbook",
}

violations contains {"message": sprintf("cluster %s is checked", [input.cluster])} if input.scope == "static"
"""


def whole_pack_static(engine: RegorusEngine, facts: dict) -> list:
    return collect_results(engine.evaluate_tree(facts), engine._set, Scope.STATIC)


@pytest.mark.parametrize("name", STATIC_EXAMPLES)
def test_the_static_answer_equals_the_whole_pack_filtered(shipped, name: str) -> None:
    assert shipped.static_answer is not None
    engine, facts = RegorusEngine(shipped), example(name)
    found = engine.evaluate(facts)
    assert found == whole_pack_static(engine, facts)
    assert {r.rule.scope for r in found} <= {Scope.STATIC}


def test_it_holds_only_the_static_rules_a_custom_one_included(tmp_path: Path) -> None:
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "release.rego").write_text(CUSTOM_STATIC_RULE)
    policy_set = load_policy_set([tmp_path / "acme"])
    assert policy_set.static_answer is not None
    packages = policy_set.static_answer.rules
    assert packages["kai_gitops.rules.user.acme.release_prefix"] == "ACME-R-001"
    assert {policy_set.rules[rule].scope for rule in packages.values()} == {Scope.STATIC}
    statics = {rule for rule, meta in policy_set.rules.items() if meta.scope is Scope.STATIC}
    assert set(packages.values()) == statics
    engine, facts = RegorusEngine(policy_set), example("facts-static-addon.json")
    found = engine.evaluate(facts)
    assert "ACME-R-001" in {r.rule.id for r in found}
    assert found == whole_pack_static(engine, facts)


def test_a_live_evaluation_still_reads_the_whole_pack(shipped) -> None:
    engine, facts = RegorusEngine(shipped), example("facts-live.json")
    found = engine.evaluate(facts)
    assert found == collect_results(engine.evaluate_tree(facts), shipped, Scope.LIVE)
    assert Scope.LIVE in {r.rule.scope for r in found}
