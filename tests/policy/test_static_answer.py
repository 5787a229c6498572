"""The PR check's static scope asks regorus for the static rules' violations only (regorus_engine.add_static_answer):
the results must be those of the whole pack's evaluation filtered to the static rules, shipped and custom."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.checks.policy import PolicySet, load_policy_set, regorus_engine
from reconciler.checks.policy.pack import collect_results
from reconciler.checks.policy.regorus_engine import RegorusEngine
from reconciler.findings.rules import Scope
from tests.support.helpers import USER_RULE as STATIC_USER_RULE  # ACME-Q-100, static, reads data.user
from tests.support.policy_shared import example

STATIC_EXAMPLES = ("facts-static-addon.json", "facts-static-standalone.json", "facts-static-workloads.json")


def whole_pack_static(policy_set: PolicySet, facts: dict) -> list:
    """What the static scope found before: the whole pack evaluated, the static rules' results kept."""
    return collect_results(RegorusEngine(policy_set).evaluate_tree(facts), policy_set, Scope.STATIC)


@pytest.mark.parametrize("name", STATIC_EXAMPLES)
def test_the_static_answer_equals_the_whole_pack_filtered(shipped, name: str) -> None:
    assert shipped.static_answer is not None
    engine, facts = RegorusEngine(shipped), example(name)
    found = engine.evaluate(facts)
    assert found == whole_pack_static(shipped, facts)
    assert {r.rule.scope for r in found} <= {Scope.STATIC}


def test_it_holds_only_the_static_rules_a_custom_one_included(tmp_path: Path) -> None:
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "budget.rego").write_text(STATIC_USER_RULE)
    (tmp_path / "budget.json").write_text(json.dumps({"user": {"queue_budget": {"max_gpu_limit": 8}}}))
    policy_set = load_policy_set([tmp_path / "acme"], [tmp_path / "budget.json"])
    assert policy_set.static_answer is not None
    packages = policy_set.static_answer.rules
    assert packages["kai_gitops.rules.user.acme.queue_budget"] == "ACME-Q-100"
    statics = {rule for rule, meta in policy_set.rules.items() if meta.scope is Scope.STATIC}
    assert set(packages.values()) == statics
    engine, facts = RegorusEngine(policy_set), example("facts-static-standalone.json")  # queue research: 32 GPUs
    found = engine.evaluate(facts)
    assert "ACME-Q-100" in {r.rule.id for r in found}
    assert found == whole_pack_static(policy_set, facts)


def test_a_live_evaluation_still_reads_the_whole_pack(shipped) -> None:
    engine, facts = RegorusEngine(shipped), example("facts-live.json")
    found = engine.evaluate(facts)
    assert found == collect_results(engine.evaluate_tree(facts), shipped, Scope.LIVE)
    assert Scope.LIVE in {r.rule.scope for r in found}


def test_the_one_rule_answers_without_a_query(shipped, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, facts = RegorusEngine(shipped), example("facts-static-workloads.json")
    expected = whole_pack_static(shipped, facts)

    def no_query(*_args: object) -> None:
        raise AssertionError("the static scope parsed a query")

    monkeypatch.setattr(regorus_engine, "eval_value", no_query)
    assert engine.evaluate(facts) == expected


@pytest.mark.parametrize("budget", [8, 64])  # research asks 32 GPUs: a violation, or `violations` undefined
def test_a_complete_violations_rule_left_undefined_falls_back_to_the_query(tmp_path: Path, budget: int) -> None:
    complete = STATIC_USER_RULE.replace("violations contains v if {", "violations := [v] if {")
    assert complete != STATIC_USER_RULE
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "budget.rego").write_text(complete)
    (tmp_path / "budget.json").write_text(json.dumps({"user": {"queue_budget": {"max_gpu_limit": budget}}}))
    policy_set = load_policy_set([tmp_path / "acme"], [tmp_path / "budget.json"])
    engine, facts = RegorusEngine(policy_set), example("facts-static-standalone.json")
    found = engine.evaluate(facts)
    assert found == whole_pack_static(policy_set, facts)
    assert ("ACME-Q-100" in {r.rule.id for r in found}) == (budget == 8)
    assert len({r.rule.id for r in found}) > 1  # the shipped rules' results are there either way
