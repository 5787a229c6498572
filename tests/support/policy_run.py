"""Shared helpers of tests/policy/test_policy_run.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

DATA_RULE = """package kai_gitops.rules.user.acme.budget

meta := {
	"id": "ACME-B-001", "title": "Queue count within budget", "severity": "info", "scope": "live",
	"rationale": "r", "remediation": "m", "source": "s",
}

violations contains v if {
	count(input.live.queues) > data.user.budget.max_queues
	msg := sprintf("%d queues", [count(input.live.queues)])
	v := {"message": msg, "subject": null, "doc": null, "path": null, "fix": null}
}
"""
