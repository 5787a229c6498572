"""Shared helpers of tests/policy/conftest.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from reconciler.checks.policy import shipped_policy_dir

EXAMPLES = shipped_policy_dir() / "examples"

ZERO = {k: {"quota": 0, "limit": 0, "overQuotaWeight": 0} for k in ("cpu", "gpu", "memory")}

USER_RULE = """package kai_gitops.rules.user.acme.queue_names

meta := {
	"id": "ACME-Q-001",
	"title": "Team queues are prefixed with team-",
	"severity": "warning",
	"scope": "live",
	"rationale": "Acme's chargeback reads the team from the queue name.",
	"remediation": "Rename the queue to team-<name>.",
	"source": "Acme platform handbook",
}

violations contains v if {
	some q in input.live.queues
	not startswith(q.name, "team-")
	not startswith(q.name, "default-")
	v := {
		"message": sprintf("queue %s is not named team-*", [q.name]),
		"subject": {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "namespace": null, "name": q.name},
		"doc": null,
		"path": null,
		"fix": null,
	}
}
"""


def example(name: str) -> dict[str, Any]:
    return copy.deepcopy(json.loads((EXAMPLES / name).read_text()))
