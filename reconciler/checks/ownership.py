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

A controller on no list is caught by what it does: a **fight** is a field kai-gitops wrote on an earlier run
(an `applied` line of reconcile's `--audit-log`, the only record of our writes that survives the run) that
drifts again, now owned by another manager that wrote it at or after our write (managedFields time, whole
seconds). It is held the same way and raised once per object as KAI-D-009, naming both managers; a person's
kubectl (manager kubectl*) writing after us is a hand edit, undone, not a fight.

One exception, the chart's own: the default queues. The KAI chart creates them on `helm install` only and
keeps them (helm.sh/resource-policy: keep): Helm's manager owns their spec, but no later `helm upgrade`
renders them, so nothing writes them back and kai-gitops takes them over (planner.HELM_NOTE). That holds only
for Queues Git declares through the chart's default-queue values and whose meta.helm.sh annotations name the
KAI release (kai-scheduler/kai-scheduler); a Queue another Helm release manages is that release's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from reconciler.checks.attribution import HELM_MANAGERS, FieldPath, drifted_fields, live_object, owner
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import NODE, QUEUE, SCHEDULING_SHARD
from reconciler.findings.builtin_rules import CONTROLLER_FIGHT, FIELD_OWNED
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.desired import RELEASE_NAME, RELEASE_NAMESPACE, DesiredCluster, QueueOrigin
from reconciler.model.live import LiveState
from reconciler.model.managed_fields import ManagedEntry, ObjectManagers

OWN_MANAGER = "kai-gitops"  # reconcile/apply.FIELD_MANAGER (checks cannot import the acting room)
KRM = "KAI Resource Management"
# KRM's queue entries name the Queue CRD's fields differently (kai-resource-management-api Project/Department)
KRM_QUEUE_FIELDS = {"quota": "deserved", "limit": "limit", "overQuotaWeight": "overQuotaWeight"}
SHOWN = 3  # held fields the message names; the finding's details list every one


@dataclass(frozen=True)
class Controller:
    pattern: str  # fnmatch pattern on managedFields[].manager
    what: str  # who it is, as the finding names it


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


PERSON = "kubectl*"  # kubectl-edit, kubectl-patch, kubectl-client-side-apply, kubectl-label, kubectl


@dataclass(frozen=True)
class OwnWrite:
    """A field kai-gitops wrote on an earlier run (an `applied` audit line, reconcile/audit.read_own_writes)."""

    cluster: str  # the kai-gitops.yaml name the plan was for
    kind: str
    name: str
    path: tuple[str, ...]
    time: datetime  # when the outcome was recorded (UTC)


@dataclass(frozen=True)
class HeldField:
    shown: str  # the field as the drift finding shows it
    path: FieldPath  # its path in the object
    manager: str
    what: str
    source: str  # where its value really comes from
    ours_at: datetime | None = None  # a fight: when kai-gitops wrote it before `manager` wrote it back
    theirs_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "field": self.shown,
            "path": list(self.path),
            "manager": self.manager,
            "controller": self.what,
            "source": self.source,
        }
        if self.ours_at is not None:
            body |= {
                "wroteFirst": OWN_MANAGER,
                "wroteFirstAt": f"{self.ours_at:%Y-%m-%dT%H:%M:%SZ}",
                "wroteBackAt": self.theirs_at,
            }
        return body


def controllers(listed: Iterable[str]) -> tuple[Controller, ...]:
    """The built-in controllers and kai-gitops.yaml's `ownership.controllers`, in that order."""
    return BUILTIN_CONTROLLERS + tuple(Controller(p, f"field manager {p} (ownership.controllers)") for p in listed)


def controller_of(manager: str | None, known: tuple[Controller, ...]) -> Controller | None:
    if manager is None or manager == OWN_MANAGER:
        return None
    return next((c for c in known if fnmatchcase(manager, c.pattern)), None)


def ownership_findings(
    findings: list[Finding],
    desired: DesiredCluster,
    live: LiveState,
    known: tuple[Controller, ...],
    ours: tuple[OwnWrite, ...] = (),
) -> list[Finding]:
    """Per drifted object, one KAI-D-008 finding for the fields a controller owns and one KAI-D-009 for the
    fields another manager wrote back after kai-gitops wrote them (`ours`: the earlier runs' writes)."""
    held: list[Finding] = []
    for finding in findings:
        if finding.subject is None:
            continue
        fields = list(_held(finding, desired, live, known, tuple(w for w in ours if w.cluster == desired.name)))
        owned = [f for f in fields if f.ours_at is None]
        fought = [f for f in fields if f.ours_at is not None]
        if owned:
            held.append(_finding(finding, finding.subject, owned))
        if fought:
            held.append(_fight(finding, finding.subject, fought))
    return held


def _held(
    finding: Finding,
    desired: DesiredCluster,
    live: LiveState,
    known: tuple[Controller, ...],
    ours: tuple[OwnWrite, ...],
) -> Iterator[HeldField]:
    for kind, name, shown, path in drifted_fields(finding, live, desired.shared):
        if kind == NODE.kind:  # node labels are planned from Git's shared-cluster intent, not from drift
            continue
        managers = live.managers.get((kind, name))
        if managers is None:
            continue
        entry = owner(managers.entries, path, live_object(live, kind, name))
        if entry is None or entry.manager is None or _chart_default_queue(entry, managers, desired, kind, name):
            continue
        controller = controller_of(entry.manager, known)
        if controller is not None:
            yield HeldField(
                shown, path, entry.manager, controller.what, _source(controller, managers, kind, name, path)
            )
            continue
        ours_at = _written_back(entry, ours, kind, name, path)
        if ours_at is not None:
            yield HeldField(
                shown,
                path,
                entry.manager,
                f"field manager {entry.manager}",
                f"whatever field manager {entry.manager} applies",
                ours_at,
                entry.time,
            )


def _written_back(
    entry: ManagedEntry, ours: tuple[OwnWrite, ...], kind: str, name: str, path: FieldPath
) -> datetime | None:
    """When kai-gitops last wrote `path` if `entry`'s manager (no person, not us) set it at or after that."""
    manager = entry.manager or ""
    if manager == OWN_MANAGER or fnmatchcase(manager, PERSON) or entry.time is None:
        return None
    spelt = tuple(str(step) for step in path)
    writes = [w.time for w in ours if (w.kind, w.name) == (kind, name) and overlaps(w.path, (spelt,))]
    if not writes:
        return None
    last = max(writes)
    try:
        theirs = datetime.fromisoformat(entry.time.replace("Z", "+00:00"))
    except ValueError:
        return None
    return last if int(theirs.timestamp()) >= int(last.timestamp()) else None


def _chart_default_queue(
    entry: ManagedEntry, managers: ObjectManagers, desired: DesiredCluster, kind: str, name: str
) -> bool:
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
    named = "; ".join(
        f"{f.shown} (manager {f.manager}, {f.what}; its value comes from {f.source})" for f in fields[:SHOWN]
    )
    more = f"; and {len(fields) - SHOWN} more" if len(fields) > SHOWN else ""
    message = f"{ref}: {len(fields)} drifted field(s) owned by another controller, left to it: {named}{more}"
    sources = sorted({f.source for f in fields})
    fix = Fix(
        Action.NONE,
        "reconcile never writes a field another controller owns; change it at its source: " + "; ".join(sources),
    )
    return FIELD_OWNED.finding(
        Kind.DRIFT,
        message,
        drift.cluster,
        subject=ref,
        location=drift.location,
        fix=fix,
        extra={"fields": [f.to_dict() for f in fields], "drift": drift.rule_id},
    )


PlanPath = tuple[str, ...]  # a field's path as a plan spells it (plans/plan.FieldPath)


HOLDING_RULES = frozenset({FIELD_OWNED.id, CONTROLLER_FIGHT.id})


def _fight(drift: Finding, ref: ObjectRef, fields: list[HeldField]) -> Finding:
    named = "; ".join(
        f"{f.shown}: kai-gitops wrote it {f.ours_at:%Y-%m-%d %H:%M:%S} UTC, {f.manager} wrote it back {f.theirs_at}"
        for f in fields[:SHOWN]
    )
    more = f"; and {len(fields) - SHOWN} more" if len(fields) > SHOWN else ""
    managers = ", ".join(sorted({f.manager for f in fields}))
    message = f"{ref}: controller fight over {len(fields)} field(s), left alone: {named}{more}"
    fix = Fix(
        Action.NONE,
        f"stop one side: make {managers} apply Git's value, list it under ownership.controllers "
        "in kai-gitops.yaml to leave it the field, or change Git to its value",
    )
    return CONTROLLER_FIGHT.finding(
        Kind.DRIFT,
        message,
        drift.cluster,
        subject=ref,
        location=drift.location,
        fix=fix,
        extra={"fields": [f.to_dict() for f in fields], "drift": drift.rule_id},
    )


def held_paths(findings: Iterable[Finding]) -> dict[ObjectRef, tuple[PlanPath, ...]]:
    """The fields KAI-D-008 and KAI-D-009 leave alone, by object (read by the planner; waived or not)."""
    held: dict[ObjectRef, tuple[PlanPath, ...]] = {}
    for finding in findings:
        if finding.rule_id not in HOLDING_RULES or finding.subject is None:
            continue
        paths = tuple(tuple(str(step) for step in f["path"]) for f in finding.extra.get("fields") or ())
        held[finding.subject] = held.get(finding.subject, ()) + paths
    return held


def overlaps(path: PlanPath, held: tuple[PlanPath, ...]) -> bool:
    """`path` is a held field, lies under one, or holds one (a write of it would rewrite the held one)."""
    return any(path[: len(h)] == h or h[: len(path)] == path for h in held)
