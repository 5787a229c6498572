"""A rule's metadata is checked once per distinct meta, and a bad meta is refused every time it comes back."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.checks.policy.pack import PolicySet, collect_results
from reconciler.core.errors import UserError
from reconciler.findings.rules import RuleMeta

META = {
    "id": "X-001",
    "title": "t",
    "severity": "error",
    "scope": "static",
    "rationale": "r",
    "remediation": "m",
    "source": "user",
}
POLICIES = PolicySet(files=(), data={}, rules={}, rule_files={"X-001": "x.rego"})


def tree(meta: Any) -> dict[str, Any]:
    return {"area": {"x001": {"meta": meta, "violations": [{"message": "m"}]}}}


def test_the_same_meta_gives_the_same_results_as_checking_it_afresh() -> None:
    first, again = (collect_results(tree(dict(META)), POLICIES, "static") for _ in range(2))
    assert first == again and first[0].rule == RuleMeta.from_dict(META, "x.rego")


@pytest.mark.parametrize(
    "bad",
    [
        {**META, "severity": "fatal"},
        {k: v for k, v in META.items() if k != "title"},
        {**META, "title": 3},
        "not an object",
    ],
)
def test_a_bad_meta_is_refused_each_time(bad: Any) -> None:
    for _ in range(2):
        with pytest.raises(UserError):
            collect_results(tree(bad), POLICIES, "static")


def test_the_meta_the_pack_declared_is_taken_as_loaded_and_a_different_one_is_checked_afresh() -> None:
    declared = RuleMeta.from_dict(META, "x.rego")
    policies = PolicySet(files=(), data={}, rules={"X-001": declared}, rule_files={"X-001": "x.rego"})
    assert collect_results(tree(dict(META)), policies, "static")[0].rule is declared
    changed = collect_results(tree({**META, "title": "another"}), policies, "static")[0].rule
    assert changed.title == "another" and changed is not declared
    with pytest.raises(UserError):
        collect_results(tree({**META, "severity": "fatal"}), policies, "static")
