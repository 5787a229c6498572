"""Metadata of the rules written in Python (the differ, waivers, policy changes), shaped like the Rego metas.

Reports list every rule that ran with its description and remedy (SARIF's rule table, JUnit test
cases); these are the rules no Rego `meta` describes.
"""

from __future__ import annotations

from reconciler.checks.policy.pack import RuleMeta

_DRIFT_SOURCE = "kai-gitops differ (docs/policies.md#rule-ids)"
_WAIVER_SOURCE = "kai-gitops waivers (docs/policies.md#waivers)"

DRIFT_RULES = (
    RuleMeta("KAI-D-001", "Queue defined in Git is missing", "error", "live",
             "A Queue that Git defines does not exist in the cluster; workloads that name it stay Pending.",
             "Create the Queue from Git (kai-gitops shows the manifest; the chart only creates default queues on "
             "helm install).", _DRIFT_SOURCE),
    RuleMeta("KAI-D-002", "Queue differs from Git", "error", "live",
             "A live Queue's parent or resources differ from Git; the default queues are never updated by "
             "helm upgrade (helm.sh/resource-policy: keep).",
             "Patch the live Queue's spec to Git's (kubectl patch … --type merge, shown per finding).", _DRIFT_SOURCE),
    RuleMeta("KAI-D-003", "SchedulingShard differs from values", "error", "live",
             "The SchedulingShard default does not match what the KAI values render.",
             "Re-apply the KAI chart values with helm upgrade (kai-gitops never runs Helm).", _DRIFT_SOURCE),
    RuleMeta("KAI-D-004", "Release values differ from Git", "warning", "live",
             "The kai-scheduler Helm release was installed with values that differ from Git.",
             "helm upgrade the release with the values from Git.", _DRIFT_SOURCE),
)
REPOSITORY_RULES = (
    RuleMeta("KAI-W-001", "Waiver has expired", "warning", "static",
             "An expired waiver no longer hides its findings; they are reported again.",
             "Fix the findings, or renew the waiver with a new reason and expiry.", _WAIVER_SOURCE),
    RuleMeta("KAI-W-002", "Waiver matches nothing", "info", "static",
             "A waiver that matches no finding is dead weight and may hide a future one.",
             "Delete the waiver if the problem is fixed.", _WAIVER_SOURCE),
    RuleMeta("KAI-W-003", "Change edits policies or waivers", "info", "static",
             "A pull request that edits its own policies or waivers is judged by the base versions.",
             "Have the policy owners review these files.", _WAIVER_SOURCE),
)
BY_ID = {meta.id: meta for meta in (*DRIFT_RULES, *REPOSITORY_RULES)}
