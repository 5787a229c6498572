"""Shared fixtures: the shipped pack, the example facts documents, and a stand-in OPA server."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.checks.policy import PolicySet, load_policy_set, shipped_policy_dir
from tests.support.opa_standin import OpaStandin

EXAMPLES = shipped_policy_dir() / "examples"
ZERO = {k: {"quota": 0, "limit": 0, "overQuotaWeight": 0} for k in ("cpu", "gpu", "memory")}

USER_RULE = '''package kai_gitops.rules.user.acme.queue_names

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
'''


def example(name: str) -> dict[str, Any]:
    return copy.deepcopy(json.loads((EXAMPLES / name).read_text()))


@pytest.fixture(scope="session")
def shipped() -> PolicySet:
    return load_policy_set()


@pytest.fixture()
def user_dir(tmp_path: Path) -> Path:
    root = tmp_path / "acme-policies"
    (root / "queues").mkdir(parents=True)
    (root / "queues" / "names.rego").write_text(USER_RULE)
    return root


@pytest.fixture()
def standin() -> Iterator[OpaStandin]:
    server = OpaStandin(token="s3cret").start()
    try:
        yield server
    finally:
        server.stop()
