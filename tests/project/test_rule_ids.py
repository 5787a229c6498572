"""Rule ids are spelt in the rule catalogue only (reconciler/findings/): the rest of the code names a rule by its
`RuleMeta` or `PolicyRule`, so what it does for a rule lives beside the rule, not in sets of strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reconciler.checks.policy.engine import load_policy_set
from reconciler.findings.policy_rules import POLICY_RULES

RULE_ID = re.compile(r"(KAI|NVCA|NVCF)-[A-Z]-\d{3}")
PACKAGE = Path(__file__).resolve().parents[2] / "reconciler"
CATALOGUE = PACKAGE / "findings"


def rule_id_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string constant that is a rule id, whole: a message or docstring may name a rule."""
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_ID.fullmatch(node.value)
    )


def test_no_rule_id_is_spelt_outside_the_catalogue() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if CATALOGUE not in path.parents
        for line, text in rule_id_literals(path.read_text(encoding="utf-8"))
    ]
    assert found == [], (
        "name the rule by its RuleMeta (findings/builtin_rules.py) or PolicyRule "
        "(findings/policy_rules.py):\n" + "\n".join(found)
    )


def test_the_scan_finds_a_rule_id_and_passes_prose() -> None:
    source = 'RULES = {"KAI-Q-020", "NVCA-G-001"}\nif rule == "KAI-V-004": pass\nx = "(KAI-Q-001) in a message"\n'
    assert rule_id_literals(source) == [(1, "KAI-Q-020"), (1, "NVCA-G-001"), (2, "KAI-V-004")]


def test_every_policy_rule_the_code_acts_on_is_a_rule_of_the_shipped_pack() -> None:
    shipped = load_policy_set().rules
    assert [rule.id for rule in POLICY_RULES if rule.id not in shipped] == []
