"""The `policy test` runner: the shipped suite passes, failing tests are reported, coverage per rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconciler.checks.policy.testing import format_report, run_policy_tests
from reconciler.core.errors import UserError


def test_shipped_rego_suite_passes() -> None:
    report = run_policy_tests()
    failures = [f"{r.qualified}: {r.detail}" for r in report.results if not r.passed]
    assert failures == []
    assert report.failed == 0 and report.passed >= 100
    assert format_report(report).splitlines()[-1] == f"{report.passed} passed, 0 failed"


def test_every_shipped_rule_has_a_passing_and_a_failing_case(shipped) -> None:
    names = [r.name for r in run_policy_tests().results]
    for rule_id in shipped.rules:
        token = "_" + re.sub(r"^[A-Z]+-([A-Z])-(\d+)$", lambda m: m.group(1).lower() + m.group(2), rule_id) + "_"
        cases = [n for n in names if token in n + "_"]
        assert len(cases) >= 2, f"{rule_id}: tests {cases}"


FAILING = """package acme.tests

import data.kai_gitops.lib.util

test_passes if {
	data.kai_gitops.lib.util.queue_subject("q").kind == "Queue"
}

test_fails if {
	count(data.kai_gitops.rules.values.kai_v_001.violations) == 1 with input as {"scope": "static", "desired": {}}
}

test_errors if {
	count(1) == 1
}
"""


def test_failing_tests_are_reported(tmp_path: Path) -> None:
    (tmp_path / "acme_test.rego").write_text(FAILING)
    report = run_policy_tests([tmp_path])
    outcome = {r.name: (r.passed, r.detail) for r in report.results}
    assert outcome["test_passes"] == (True, None)
    assert outcome["test_fails"] == (False, "undefined")
    assert outcome["test_errors"][0] is False and f"{tmp_path}/acme_test.rego:14:" in outcome["test_errors"][1]
    text = format_report(report)
    assert text.splitlines()[-1] == "1 passed, 2 failed"
    assert f"FAIL {tmp_path}/acme_test.rego: data.acme.tests.test_fails (undefined)" in text
    assert "PASS" not in text and "PASS" in format_report(report, verbose=True)


def test_user_dir_with_its_own_rules(tmp_path: Path, user_dir: Path) -> None:
    (user_dir / "queues" / "names_test.rego").write_text("""package acme.tests.names

facts := {"scope": "live", "live": {"queues": [{"name": "research"}]}}

test_flags_unprefixed_queue if {
	count(data.kai_gitops.rules.user.acme.queue_names.violations) == 1 with input as facts
}
""")
    report = run_policy_tests([user_dir])
    assert report.summary() == "1 passed, 0 failed"


def test_no_tests_found_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        run_policy_tests([tmp_path])
    assert err.value.line().startswith(f"no *_test.rego files in {tmp_path}")
