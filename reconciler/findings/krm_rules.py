"""The KAI Resource Management rules (KAI-K-0xx, checks/krm.py): Git's Queues and shards against what KRM's
Projects, Departments and NodePools generate. KAI-D-010 (builtin_rules.py) stays the detection fallback for
what no known KRM object explains."""

from __future__ import annotations

from reconciler.findings.finding import Severity
from reconciler.findings.rules import RuleMeta, Scope

_KRM_SOURCE = (
    "docs/policies.md#kai-resource-management / kai-resource-management docs/concepts/queues-and-quota.md, "
    "docs/co-install-with-existing-kai.md; kai-resource-management-api kai/v1alpha1"
)

KRM_QUEUE_NAME_TAKEN = RuleMeta(
    "KAI-K-001",
    "Queue in Git has a name a KRM Project or Department generates",
    Severity.ERROR,
    Scope.STATIC,
    "KAI Resource Management generates one Queue per spec.queues[] entry of a Project or Department (named as the "
    "entry says, else <owner>-<nodepool>, or <owner> on the default node pool) and rewrites its labels, owner "
    "reference and spec from the entry; a Queue no Project or Department owns that carries such a name is taken "
    "over (unless allowExternalQueues is on). A Queue Git also declares is then written by both, forever, and Git's "
    "numbers lose.",
    "Move the numbers to the entry (quota becomes deserved; limit and overQuotaWeight keep their names) and delete "
    "the Queue from Git, or keep it Git's with kai.resources/resource-manual-override=true on the Queue.",
    _KRM_SOURCE,
)
KRM_QUEUE_TREE = RuleMeta(
    "KAI-K-002",
    "Git's queue tree agrees with KRM's Departments and Projects",
    Severity.ERROR,
    Scope.STATIC,
    "KRM parents a project's queue to its department's queue for the same node pool and keeps its own trees "
    "apart from queues it does not own. A Queue Git parents elsewhere is re-parented by KRM on its next pass, and "
    "a queue Git hangs under a KRM queue takes a share of a department's quota that no Project accounts for.",
    "Make Git's parentQueue the one KRM sets (the message names it), or move the queue into the Project's or "
    "Department's spec.queues[].",
    _KRM_SOURCE,
)
KRM_SHARD_OWNED = RuleMeta(
    "KAI-K-003",
    "SchedulingShard in Git is one a KRM NodePool owns",
    Severity.WARNING,
    Scope.STATIC,
    "Each NodePool owns the SchedulingShard of its name and writes its spec from the NodePool's "
    "schedulingShardConfig; a shard Git also declares is written by both. The opt-out label does not help here: "
    "it counts only before a shard is adopted, and never on the default shard.",
    "Declare the shard's settings in NodePool <name> spec.schedulingShardConfig and drop it from Git, or rename "
    "the NodePool.",
    _KRM_SOURCE,
)
KRM_PROJECT_UNPARENTED = RuleMeta(
    "KAI-K-004",
    "A project's queue has its department's queue for the same node pool",
    Severity.WARNING,
    Scope.STATIC,
    "A project's queue is parented to its department's queue for the same node pool; when the department (or the "
    "Project's parent) has none, the project's queue becomes a root of its own, unconstrained by the department: "
    "usually a mistake in the spec rather than an intent (KRM's own words).",
    "Add a spec.queues[] entry for that node pool to the department, or correct the Project's parent or the "
    "entry's nodepool.",
    _KRM_SOURCE,
)

KRM_RULES = (KRM_QUEUE_NAME_TAKEN, KRM_QUEUE_TREE, KRM_SHARD_OWNED, KRM_PROJECT_UNPARENTED)
