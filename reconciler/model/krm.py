"""KAI Resource Management (KRM, kai-scheduler/kai-resource-management): its objects and the Queues and shards
they generate.

KRM's Project and Department objects (`kai.resources/v1alpha1`, cluster-scoped) generate and rewrite KAI
Queues: one per owner and node pool, named as the `spec.queues[]` entry says or else `<owner>-<nodepool>`
(`<owner>` on the default node pool); a project's queue is parented to its department's queue for the same
node pool, and has no parent when the department has none. The entry's numbers are the Queue's under other
names (`deserved` is the Queue's `quota`). Each NodePool owns the SchedulingShard of its name. The
project-controller takes over a Queue no Project or Department owns when one of them would use its name
(unless `allowExternalQueues` is on); the nodepool-controller adopts every SchedulingShard that existed
before it. Each has one opt-out label. Sources: kai-resource-management-api kai/v1alpha1 (project_types.go,
department_types.go, resources.go, nodepool_types.go, krm_config_types.go); kai-resource-management
docs/concepts/queues-and-quota.md, docs/reference/labels-and-annotations.md, docs/co-install-with-existing-kai.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler.core.jsonvalue import JSONValue, as_object
from reconciler.core.resources import DEPARTMENT, KRM_CONFIG, KRM_KINDS, NODE_POOL, PROJECT
from reconciler.model.queues import RESOURCES, QueueSpec, Triple
from reconciler.model.values import as_number

GROUP = "kai.resources"
# Any one served means KRM is installed (its chart installs them together; KRMConfig `krm-config` is its config).
CRDS = tuple(r.crd_name for r in KRM_KINDS)
QUEUE_OPT_OUT = "kai.resources/resource-manual-override"  # on a Queue: KRM stops managing it
SHARD_OPT_OUT = "kai.scheduler/ignore-shard-for-krm"  # on a SchedulingShard: not adopted
QUEUE_MANAGERS = ("project-controller", "department-controller")
SHARD_MANAGERS = ("nodepool-controller",)
# The labels the project-controller writes on every Queue it generates (labels-and-annotations.md).
QUEUE_OWNER_LABELS = ("project", "kai.resources/department-name")
KRM_CONFIG_NAME = "krm-config"  # the only KRMConfig the operator reconciles
DEFAULT_NODE_POOL = "default"  # global.defaultNodePoolName's default; always exists
QUEUE_NAME_MAX = 63
# A spec.queues[] entry's numbers -> the Queue field each becomes (resources.go vs the Queue CRD).
TO_QUEUE_FIELD = {"deserved": "quota", "limit": "limit", "overQuotaWeight": "overQuotaWeight"}
OWNER_KINDS = (PROJECT.kind, DEPARTMENT.kind)


@dataclass(frozen=True)
class QueueEntry:
    """One `spec.queues[]` item of a Project or Department."""

    index: int
    name: str | None  # as written; None: KRM derives it
    nodepool: str
    resources: dict[str, Triple]  # in the Queue's terms (deserved -> quota); an absent number is 0


@dataclass(frozen=True)
class Owner:
    """A Project or Department: what its queues are generated from."""

    kind: str
    name: str
    parent: str | None  # a Project's department (spec.parent); None for a Department
    queues: tuple[QueueEntry, ...]
    doc: str | None = None  # the Git doc holding it; None when read from the cluster


@dataclass(frozen=True)
class NodePool:
    name: str
    doc: str | None = None


@dataclass
class KrmObjects:
    """What KRM generates from, by name; Git's (krmFiles) over the cluster's when both are known."""

    projects: dict[str, Owner] = field(default_factory=dict)
    departments: dict[str, Owner] = field(default_factory=dict)
    nodepools: dict[str, NodePool] = field(default_factory=dict)
    allow_external_queues: bool = False
    default_node_pool: str = DEFAULT_NODE_POOL
    has_config: bool = False  # KRMConfig krm-config was among the objects

    def __bool__(self) -> bool:
        return bool(self.projects or self.departments or self.nodepools)

    def owners(self) -> list[Owner]:
        return [*self.departments.values(), *self.projects.values()]

    def add(self, obj: Mapping[str, JSONValue], doc: str | None = None) -> None:
        """A KRM object (live or from Git) of one of KRM_KINDS; others are ignored. Git's are typed where they are
        read (model/desired.py `_krm_types`: a wrong type is an error at its line); a live object of another shape
        (the server validates its CRD; a snapshot file may not) is read as far as it has the expected one."""
        kind = str(obj.get("kind", ""))
        meta, spec = as_object(obj.get("metadata")), as_object(obj.get("spec"))
        name = str(meta.get("name") or "")
        if kind == PROJECT.kind:
            parent = spec.get("parent")
            self.projects[name] = Owner(kind, name, str(parent) if parent else None, _entries(spec), doc)
        elif kind == DEPARTMENT.kind:
            self.departments[name] = Owner(kind, name, None, _entries(spec), doc)
        elif kind == NODE_POOL.kind:
            self.nodepools[name] = NodePool(name, doc)
        elif kind == KRM_CONFIG.kind and name == KRM_CONFIG_NAME:
            settings = as_object(spec.get("global"))
            self.has_config = True
            self.allow_external_queues = settings.get("allowExternalQueues") is True
            pool = settings.get("defaultNodePoolName")
            self.default_node_pool = str(pool) if isinstance(pool, str) and pool else DEFAULT_NODE_POOL

    def over(self, live: KrmObjects) -> KrmObjects:
        """These (Git's) objects over `live`'s: Git is what the cluster will hold once applied."""
        config = self if self.has_config else live
        return KrmObjects(
            {**live.projects, **self.projects},
            {**live.departments, **self.departments},
            {**live.nodepools, **self.nodepools},
            config.allow_external_queues,
            config.default_node_pool,
            config.has_config,
        )


@dataclass(frozen=True)
class GeneratedQueue:
    """A Queue KRM generates from one `spec.queues[]` entry, as KAI's Queue CRD would hold it."""

    spec: QueueSpec
    owner: Owner
    entry: QueueEntry


def queue_name(owner: Owner, entry: QueueEntry, default_pool: str) -> str:
    """The entry's name, or the one KRM derives (queues-and-quota.md#queue-names). KRM adds a random suffix when
    another owner holds the derived name: that name cannot be predicted and is left out."""
    if entry.name:
        return entry.name
    derived = owner.name if entry.nodepool == default_pool else f"{owner.name}-{entry.nodepool}"
    return derived[:QUEUE_NAME_MAX]


def generated_queues(objects: KrmObjects) -> list[GeneratedQueue]:
    """Every Queue the Departments and Projects generate: departments' first (roots), then projects', each
    parented to its department's queue for the same node pool."""
    pool = objects.default_node_pool
    by_pool = {d.name: {e.nodepool: queue_name(d, e, pool) for e in d.queues} for d in objects.departments.values()}
    generated = []
    for owner in objects.owners():
        for entry in owner.queues:
            parent = by_pool.get(owner.parent or "", {}).get(entry.nodepool) if owner.kind == PROJECT.kind else None
            spec = QueueSpec(queue_name(owner, entry, pool), parent, dict(entry.resources))
            generated.append(GeneratedQueue(spec, owner, entry))
    return generated


def generated_shards(objects: KrmObjects) -> set[str]:
    """The SchedulingShards the NodePools own: one per NodePool, named after it."""
    return set(objects.nodepools)


def entry_path(entry: QueueEntry, *rest: str | int) -> tuple[str | int, ...]:
    """The YAML path of an entry (or of a field under it) in its Project's or Department's document."""
    return ("spec", "queues", entry.index, *rest)


def _entries(spec: Mapping[str, JSONValue]) -> tuple[QueueEntry, ...]:
    entries = []
    queues = spec.get("queues")
    for index, item in enumerate(queues if isinstance(queues, list) else []):
        given = as_object(item)
        name = given.get("name")
        resources = as_object(given.get("resources"))
        triples = {res: _triple(resources.get(res)) for res in RESOURCES}
        entries.append(
            QueueEntry(
                index, str(name) if isinstance(name, str) and name else None, str(given.get("nodepool") or ""), triples
            )
        )
    return tuple(entries)


def _triple(value: JSONValue) -> Triple:
    given = as_object(value)
    return Triple(
        as_number(given.get("deserved")), as_number(given.get("limit")), as_number(given.get("overQuotaWeight"))
    )
