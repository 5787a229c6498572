"""Shared helpers of tests/policy/test_policy_bundle.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import commit_files, load_demo_builder
from tests.support.policy_run import DATA_RULE
from tests.support.policy_shared import USER_RULE


def build_policy_repo(root: Path) -> Path:
    """The demo repository with a user rule, a rule reading policy data, and the data file."""
    load_demo_builder().build_repo(root)
    config = (root / "kai-gitops.yaml").read_text()
    commit_files(
        root,
        {
            "kai-gitops.yaml": config + "policies:\n  dirs: [policy]\n  data: [policy/budget.yaml]\n",
            "policy/acme/names.rego": USER_RULE,
            "policy/acme/budget.rego": DATA_RULE,
            "policy/budget.yaml": "budget:\n  max_queues: 1\n",
        },
        "user policies",
    )
    return root
