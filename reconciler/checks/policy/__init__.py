"""Rego policies over the facts document: engines, the test runner, waivers and conversion to findings."""

from reconciler.checks.policy.engine import load_policy_set, make_engine
from reconciler.checks.policy.pack import PolicyEngine, PolicyResult, PolicySet, shipped_policy_dir
from reconciler.findings.rules import RuleMeta

__all__ = [
    "PolicyEngine",
    "PolicyResult",
    "PolicySet",
    "RuleMeta",
    "load_policy_set",
    "make_engine",
    "shipped_policy_dir",
]
