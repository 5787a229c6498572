"""Whose field is it: a drifted field another controller owns is left to that controller (KAI-D-008).

reconcile writes merge patches (reconcile/apply.py). A field another controller manages would be written back
on that controller's next pass and patched again on our next run: a fight, not a fix. So before a field is
planned its live owner is read from `managedFields` (checks/attribution.owner: the entry that set it last).
When the owner is a controller, the field is *held*: one KAI-D-008 finding per object names each held field,
its manager, and where its value really comes from, and the planner leaves those fields out
(reconcile/planner.py). The drift finding stays in the report: nothing `diff` reports is lost.

Controllers are the built-in list below plus `ownership.controllers` in kai-gitops.yaml (fnmatch patterns on
the manager's name). kai-gitops itself never is one, and neither is a person: kubectl writes as kubectl-edit,
kubectl-patch, kubectl-client-side-apply or kubectl, so a hand edit of a field Git declares is still undone.

One exception, the chart's own: the default queues. The KAI chart creates them on `helm install` only and
keeps them (helm.sh/resource-policy: keep): Helm's manager owns their spec, but no later `helm upgrade`
renders them, so nothing writes them back and kai-gitops takes them over (planner.HELM_NOTE). That holds only
for Queues Git declares through the chart's default-queue values and whose meta.helm.sh annotations name the
KAI release (kai-scheduler/kai-scheduler); a Queue another Helm release manages is that release's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from reconciler.checks.attribution import HELM_MANAGERS, FieldPath, drifted_fields, live_object, owner
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import NODE, QUEUE, SCHEDULING_SHARD
from reconciler.findings.builtin_rules import FIELD_OWNED
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.desired import RELEASE_NAME, RELEASE_NAMESPACE, DesiredCluster, QueueOrigin
from reconciler.model.live import LiveState
from reconciler.model.managed_fields import ManagedEntry, ObjectManagers

OWN_MANAGER = "kai-gitops"   # reconcile/apply.FIELD_MANAGER (checks cannot import the acting room)
KRM = "KAI Resource Management"
# KRM's queue entries name the Queue CRD's fields differently (kai-resource-management-api Project/Department)
KRM_QUEUE_FIELDS = {"quota": "deserved", "limit": "limit", "overQuotaWeight": "overQuotaWeight"}
SHOWN = 3   # held fields the message names; the finding's details list every one


@dataclass(frozen=True)
class Controller:
    pattern: str     # fnmatch pattern on managedFields[].manager
    what: str        # who it is, as the finding names it


BUILTIN_CONTROLLERS = (
    Controller("kai-operator", "the KAI operator"),
    Controller("operator", "the KAI operator"),
    Controller("kai-config-deployer", "the KAI chart's kai-config-deployer hook"),
    Controller("project-controller", KRM),
    Controller("department-controller", KRM),
    Controller("nodepool-controller", KRM),
    Controller("helm", "Helm"),
    Controller("helm-controller", "Flux's helm-controller"),
    Controller("kustomize-controller", "Flux's kustomize-controller"),
    Controller("argocd-controller", "Argo CD"),
    Controller("argocd-application-controller", "Argo CD"),
)


@dataclass(frozen=True)
class HeldField:
    shown: str                 # the field as the drift finding shows it
    path: FieldPath            # its path in the object
    manager: str
    what: str
    source: str                # where its value really comes from

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.shown, "path": list(self.path), "manager": self.manager, "controller": self.what,
                "source": self.source}


def controllers(listed: Iterable[str]) -> tuple[Controller, ...]:
    """The built-in controllers and kai-gitops.yaml's `ownership.controllers`, in that order."""
    return BUILTIN_CONTROLLERS + tuple(Controller(p, f"field manager {p} (ownership.controllers)") for p in listed)


def controller_of(manager: str | None, known: tuple[Controller, ...]) -> Controller | None:
    if manager is None or manager == OWN_MANAGER:
        return None
    return next((c for c in known if fnmatchcase(manager, c.pattern)), None)


def ownership_findings(findings: list[Finding], desired: DesiredCluster, live: LiveState,
                       known: tuple[Controller, ...]) -> list[Finding]:
    """One KAI-D-008 finding per drifted object with fields a controller owns."""
    held: list[Finding] = []
    for finding in findings:
        if finding.subject is None:
            continue
        fields = list(_held(finding, desired, live, known))
        if fields:
            held.append(_finding(finding, finding.subject, fields))
    return held


def _held(finding: Finding, desired: DesiredCluster, live: LiveState, known: tuple[Controller, ...]
          ) -> Iterator[HeldField]:
    for kind, name, shown, path in drifted_fields(finding, live, desired.shared):
        if kind == NODE.kind:   # node labels are planned from Git's shared-cluster intent, not from drift
            continue
        managers = live.managers.get((kind, name))
        if managers is None:
            continue
        entry = owner(managers.entries, path, live_object(live, kind, name))
        controller = controller_of(entry.manager if entry else None, known)
        if entry is None or entry.manager is None or controller is None:
            continue
        if _chart_default_queue(entry, managers, desired, kind, name):
            continue
        yield HeldField(shown, path, entry.manager, controller.what, _source(controller, managers, kind, name, path))


def _chart_default_queue(entry: ManagedEntry, managers: ObjectManagers, desired: DesiredCluster, kind: str,
                         name: str) -> bool:
    """Helm's field on a default queue the KAI release created once and never renders again (module doc)."""
    if entry.manager not in HELM_MANAGERS or kind != QUEUE.kind:
        return False
    defaults = {q.spec.name for q in desired.queues if q.origin == QueueOrigin.DEFAULT_QUEUE}
    return name in defaults and managers.release == (RELEASE_NAMESPACE, RELEASE_NAME)


def _source(controller: Controller, managers: ObjectManagers, kind: str, name: str, path: FieldPath) -> str:
    if controller.what == KRM:
        return _krm_source(kind, name, path)
    if controller.pattern in HELM_MANAGERS:
        release = "/".join(managers.release) if managers.release else "that manages it"
        return f"the values of Helm release {release} (helm upgrade)"
    if controller.pattern == "kai-config-deployer":
        return "the KAI chart's values, applied by the kai-config-deployer hook on helm upgrade"
    if controller.what == "the KAI operator":
        return "the KAI operator's own defaults (set it in kai-config or the chart's values)"
    if controller.what == "Argo CD":
        return f"the Argo CD Application that syncs {kind}/{name} (its source repository)"
    if controller.pattern == "kustomize-controller":
        return f"the Flux Kustomization that applies {kind}/{name} (its source repository)"
    return f"whatever field manager {controller.pattern} applies"


def _krm_source(kind: str, name: str, path: FieldPath) -> str:
    """KRM generates Queues from Project/Department `spec.queues[]` and SchedulingShards from NodePools."""
    if kind == SCHEDULING_SHARD.kind:
        return f"NodePool {name} (KAI Resource Management rewrites its SchedulingShard's spec)"
    entry = "the Project or Department whose spec.queues[] entry generates Queue " + name
    if path[:2] == ("spec", "parentQueue"):
        return f"{entry} (a project queue's parent is its Department's queue for the same node pool)"
    if len(path) >= 4 and path[:2] == ("spec", "resources"):
        return f"{entry}: resources.{path[2]}.{KRM_QUEUE_FIELDS.get(str(path[3]), str(path[3]))}"
    return entry


def _finding(drift: Finding, ref: ObjectRef, fields: list[HeldField]) -> Finding:
    named = "; ".join(f"{f.shown} (manager {f.manager}, {f.what}; its value comes from {f.source})"
                      for f in fields[:SHOWN])
    more = f"; and {len(fields) - SHOWN} more" if len(fields) > SHOWN else ""
    message = f"{ref}: {len(fields)} drifted field(s) owned by another controller, left to it: {named}{more}"
    sources = sorted({f.source for f in fields})
    fix = Fix(Action.NONE, "reconcile never writes a field another controller owns; change it at its source: "
              + "; ".join(sources))
    return FIELD_OWNED.finding(Kind.DRIFT, message, drift.cluster, subject=ref, location=drift.location, fix=fix,
                               extra={"fields": [f.to_dict() for f in fields], "drift": drift.rule_id})


PlanPath = tuple[str, ...]   # a field's path as a plan spells it (plans/plan.FieldPath)


def held_paths(findings: Iterable[Finding]) -> dict[ObjectRef, tuple[PlanPath, ...]]:
    """The fields KAI-D-008 leaves to their controllers, by object (read by the planner; waived or not)."""
    held: dict[ObjectRef, tuple[PlanPath, ...]] = {}
    for finding in findings:
        if finding.rule_id != FIELD_OWNED.id or finding.subject is None:
            continue
        paths = tuple(tuple(str(step) for step in f["path"]) for f in finding.extra.get("fields") or ())
        held[finding.subject] = held.get(finding.subject, ()) + paths
    return held


def overlaps(path: PlanPath, held: tuple[PlanPath, ...]) -> bool:
    """`path` is a held field, lies under one, or holds one (a write of it would rewrite the held one)."""
    return any(path[:len(h)] == h or h[:len(path)] == path for h in held)
