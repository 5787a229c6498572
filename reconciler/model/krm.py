"""KAI Resource Management (KRM, kai-scheduler/kai-resource-management): the names kai-gitops detects it by.

KRM's Project and Department objects (`kai.resources/v1alpha1`, cluster-scoped) generate and rewrite KAI
Queues (one per owner and node pool, named `<owner>-<nodepool>`, or `<owner>` on the default node pool), and
each NodePool owns the SchedulingShard of its name. Its project-controller takes over a Queue that no
Project or Department owns but that carries a name one of them would use; its nodepool-controller adopts
every SchedulingShard that existed before it and overwrites its spec. Each has one opt-out label.
"""

from __future__ import annotations

GROUP = "kai.resources"
# Any one served means KRM is installed (its chart installs them together; KRMConfig `krm-config` is its config).
CRDS = (f"projects.{GROUP}", f"departments.{GROUP}", f"nodepools.{GROUP}", f"krmconfigs.{GROUP}")
QUEUE_OPT_OUT = "kai.resources/resource-manual-override"     # on a Queue: KRM stops managing it
SHARD_OPT_OUT = "kai.scheduler/ignore-shard-for-krm"         # on a SchedulingShard: not adopted
QUEUE_MANAGERS = ("project-controller", "department-controller")
SHARD_MANAGERS = ("nodepool-controller",)
