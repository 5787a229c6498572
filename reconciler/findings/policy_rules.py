"""The shipped Rego rules the Python code acts on, each named once, with what the code does for it.

A Rego rule's metadata (title, severity, remedy …) is its `meta` in policies/kai_gitops/rules/; what kai-gitops
itself does about a finding of it (the Git edit `--fix-git` makes, the plan it stops, the node label that
settles it) is here, so no other module spells a rule id. Every id here is a rule of the shipped pack
(tests/project/test_rule_ids.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class GitFix(StrEnum):
    """How `--fix-git` edits Git for a rule's finding (checks/git_edits.py, docs/git-hosts.md)."""

    CANONICAL_VALUE = "canonical-value"  # the canonical KAI value at the finding's path
    WRITE_OUT = "write-out"  # every canonical KAI value the values file leaves to the chart
    GATE_SPELLING = "gate-spelling"  # the misspelt gate at the finding's path, respelt
    KAI_GATE = "kai-gate"  # the KAIScheduler gate added
    QUEUE_FILE = "queue-file"  # the finding's Queue made unlimited in its queue file


class PlanRole(StrEnum):
    """What a queue rule's findings do beside a `reconcile` plan (plans/quota.py)."""

    REFUSES_APPLY = "refuses-apply"  # --apply refuses the change it flags unless --allow-over-quota
    SHOWN = "shown"  # listed beside the plan: what the queues in Git would do


class LabelChange(StrEnum):
    """Which node label change settles a label rule's finding (checks/node_labels.py)."""

    DEDICATED_LABELLED = "dedicated-labelled"  # removed: dedicated intent labels no node
    SHARED_UNLABELLED = "shared-unlabelled"  # set: an intended node lacks it
    NOT_EXACTLY_TRUE = "not-exactly-true"  # set to exactly "true", or removed
    SHARED_EXTRA = "shared-extra"  # removed: a node the shared intent does not name


@dataclass(frozen=True)
class PolicyRule:
    id: str
    git_fix: GitFix | None = None
    plan_role: PlanRole | None = None
    label_change: LabelChange | None = None


PLACEMENT_BINPACK = PolicyRule("KAI-V-001", git_fix=GitFix.CANONICAL_VALUE)
NODEPLACEMENT_PLUGIN = PolicyRule("KAI-V-002", git_fix=GitFix.CANONICAL_VALUE)
ACTIONS_DISABLED = PolicyRule("KAI-V-003", git_fix=GitFix.CANONICAL_VALUE)
CANONICAL_WRITTEN_OUT = PolicyRule("KAI-V-004", git_fix=GitFix.WRITE_OUT)
DEFAULT_QUEUES_UNLIMITED = PolicyRule("KAI-Q-001", git_fix=GitFix.CANONICAL_VALUE)
DEFAULT_QUEUE_NAMES = PolicyRule("KAI-Q-002", git_fix=GitFix.CANONICAL_VALUE)
USED_QUEUES_UNLIMITED = PolicyRule("KAI-Q-011", git_fix=GitFix.QUEUE_FILE)
QUEUE_HAS_RESOURCES = PolicyRule("KAI-Q-012", git_fix=GitFix.QUEUE_FILE)
KAI_GATE_ENABLED = PolicyRule("NVCA-G-001", git_fix=GitFix.KAI_GATE)
GATE_NAME_KNOWN = PolicyRule("NVCA-G-004", git_fix=GitFix.GATE_SPELLING)  # a harmless typo is respelt too
GATE_NAME_CASED = PolicyRule("NVCA-G-005", git_fix=GitFix.GATE_SPELLING)
OVER_QUOTA = PolicyRule("KAI-Q-020", plan_role=PlanRole.REFUSES_APPLY)
CHILDREN_WITHIN_QUOTA = PolicyRule("KAI-Q-021", plan_role=PlanRole.SHOWN)
WITHIN_PARENT = PolicyRule("KAI-Q-022", plan_role=PlanRole.SHOWN)
PARENT_EXISTS = PolicyRule("KAI-Q-023", plan_role=PlanRole.SHOWN)
DEDICATED_LABELLED = PolicyRule("NVCA-S-010", label_change=LabelChange.DEDICATED_LABELLED)
SHARED_UNLABELLED = PolicyRule("NVCA-S-011", label_change=LabelChange.SHARED_UNLABELLED)
NOT_EXACTLY_TRUE = PolicyRule("NVCA-S-012", label_change=LabelChange.NOT_EXACTLY_TRUE)
SHARED_EXTRA = PolicyRule("NVCA-S-013", label_change=LabelChange.SHARED_EXTRA)

POLICY_RULES = (
    PLACEMENT_BINPACK,
    NODEPLACEMENT_PLUGIN,
    ACTIONS_DISABLED,
    CANONICAL_WRITTEN_OUT,
    DEFAULT_QUEUES_UNLIMITED,
    DEFAULT_QUEUE_NAMES,
    USED_QUEUES_UNLIMITED,
    QUEUE_HAS_RESOURCES,
    KAI_GATE_ENABLED,
    GATE_NAME_KNOWN,
    GATE_NAME_CASED,
    OVER_QUOTA,
    CHILDREN_WITHIN_QUOTA,
    WITHIN_PARENT,
    PARENT_EXISTS,
    DEDICATED_LABELLED,
    SHARED_UNLABELLED,
    NOT_EXACTLY_TRUE,
    SHARED_EXTRA,
)
BY_ID = {rule.id: rule for rule in POLICY_RULES}
# The queue rules shown beside a plan, in rule order; the node label rules, by the change that settles each.
PLAN_QUEUE_RULES = tuple(rule for rule in POLICY_RULES if rule.plan_role is not None)
LABEL_RULES = {rule.label_change: rule for rule in POLICY_RULES if rule.label_change is not None}


def git_fix(rule_id: str) -> GitFix | None:
    """How `--fix-git` edits Git for a finding of `rule_id`; None when it makes no edit for that rule."""
    rule = BY_ID.get(rule_id)
    return rule.git_fix if rule is not None else None
