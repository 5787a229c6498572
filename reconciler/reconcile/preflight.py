"""Checks before any write: the plan is for this cluster, within the cap, cuts no queue below its running
work unless allowed, and is not stale, field by field.

Staleness is judged per planned field, not by resourceVersion (KAI and the kubelet rewrite status all
the time): each object is read again and every field it plans to change must still hold the plan's
*before* — or already hold its *after*, when an earlier run applied it (then it is skipped, so a re-run
after a crash never applies anything twice). Anything else refuses the whole plan, naming object and
field. The fresh resourceVersion becomes the write's precondition, so nothing slips in between.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.core.errors import UserError
from reconciler.core.resources import NODE
from reconciler.findings.policy_rules import OVER_QUOTA
from reconciler.model.live import SCHEDULE_LABEL, LiveState
from reconciler.model.queues import RESOURCES
from reconciler.plans.plan import Change, ClusterIdentity, Plan
from reconciler.plans.quota import over_quota_changes
from reconciler.plans.writable import LABEL_PATH
from reconciler.reconcile.apply import FIELD_MANAGER, ClusterWriter, Pending, concurrently
from reconciler.reconcile.staleness import change_state
from reconciler.report.report import Report


def check_identity(plan: Plan, identity: ClusterIdentity) -> None:
    if plan.identity is None:
        raise UserError(
            "the plan names no cluster (it was made from a snapshot) and cannot be applied",
            hint="run `kai-gitops reconcile` against the cluster itself",
        )
    if plan.identity.kube_system_uid == identity.kube_system_uid and plan.identity.server != identity.server:
        raise UserError(
            f"the plan was made through {plan.identity.shown}, but this run reaches the cluster "
            f"through {identity.shown}: refusing it (a plan is bound to URL and cluster)",
            hint="make the plan through the endpoint that applies it",
        )
    if plan.identity != identity:
        raise UserError(
            f"the plan is for cluster {plan.identity}, but this is {identity}: refusing it",
            hint="make a new plan against this cluster",
        )


def check_cluster_name(plan: Plan, cluster: str) -> None:
    if plan.cluster != cluster:
        raise UserError(
            f"the plan is for cluster {plan.cluster!r} of kai-gitops.yaml, this run is for {cluster!r}",
            hint="pass the plan's --cluster, or make a new plan",
        )


def check_cap(plan: Plan, max_changes: int) -> None:
    if len(plan.changes) > max_changes:
        raise UserError(
            f"the plan has {len(plan.changes)} changes, more than --max-changes {max_changes}: refusing all of them",
            hint="review the plan and raise --max-changes if it is right",
        )


def check_over_quota(plan: Plan, report: Report, allowed: bool) -> None:
    """A change that cuts a queue below what its running work holds (KAI-Q-020, judged on the read this run
    just made, so a saved plan is held to today's allocation) is refused unless --allow-over-quota."""
    flagged = over_quota_changes(plan, report)
    if not flagged or allowed:
        return
    shown = "; ".join(f.message for _change, findings in flagged[:3] for f in findings)
    more = f"; and {len(flagged) - 3} more queue(s)" if len(flagged) > 3 else ""
    raise UserError(
        f"the plan cuts a queue below what its running work holds ({OVER_QUOTA.id}), nothing was "
        f"written: {shown}{more}",
        hint="review the work it affects; to apply the cut anyway, add --allow-over-quota",
    )


def check_shared_mode_kept(plan: Plan, live: LiveState) -> None:
    """A plan that removes the schedule label from the last node carrying it turns NVCA's Shared Cluster mode
    off; while a queue caps usage (the NVCA-S-014 condition: non-NVCF work shares the cluster) that is refused."""
    labels: dict[str, str | None] = dict(live.schedule_labels)
    for change in plan.changes:
        for field in change.fields:
            if change.ref.kind == NODE.kind and field.path == LABEL_PATH:
                labels[change.ref.name] = field.after
    if not _shared_mode_on(live.schedule_labels) or _shared_mode_on(labels):
        return
    capped = sorted(
        name
        for name, spec in live.queues.items()
        if spec.resources is not None and any(spec.triple(r).limit != -1 for r in RESOURCES)
    )
    if capped:
        shown = ", ".join(capped[:3]) + (f" and {len(capped) - 3} more" if len(capped) > 3 else "")
        raise UserError(
            f"the plan removes {SCHEDULE_LABEL}=true from the last labelled node(s), which turns NVCA's "
            f"Shared Cluster mode off while {len(capped)} queue(s) cap usage ({shown}; NVCA-S-014): "
            "nothing was written",
            hint="declare sharedCluster intent shared with the NVCF nodes in kai-gitops.yaml",
        )


def _shared_mode_on(labels: Mapping[str, str | None]) -> bool:
    return any(value == "true" for value in labels.values())


def fresh_state(writer: ClusterWriter, plan: Plan) -> tuple[list[Pending], list[Change]]:
    """(changes to write with their preconditions, changes already applied); UserError if any is stale."""
    current = _read_again(writer, plan.changes)
    pending: list[Pending] = []
    done: list[Change] = []
    stale: list[str] = []
    for change, obj in zip(plan.changes, current, strict=True):
        state = change_state(change, obj, stale)
        if state == "pending":
            meta = (obj or {}).get("metadata") or {}
            pending.append(Pending(change, meta.get("resourceVersion"), _managers(change, obj)))
        elif state == "done":
            done.append(change)
    if stale:
        shown = "; ".join(stale[:5]) + (f"; and {len(stale) - 5} more" if len(stale) > 5 else "")
        raise UserError(
            f"the plan is stale, nothing was written: {shown}",
            hint="make a new plan (`kai-gitops reconcile`) and review it",
        )
    return pending, done


# Above this many node changes one paged list of all nodes is cheaper than a GET per node.
NODE_LIST_THRESHOLD = 50


def _read_again(writer: ClusterWriter, changes: tuple[Change, ...]) -> list[dict[str, Any] | None]:
    """Each planned object as stored now (None: absent), in plan order."""
    node_changes = sum(1 for c in changes if c.ref.kind == NODE.kind)
    if node_changes <= NODE_LIST_THRESHOLD:
        return concurrently(changes, lambda c: writer.get(c.ref), writer.settings.workers)
    nodes = writer.list_nodes()
    # Keyed by ref, not by Change: a create carries its manifest (a dict), so a Change is not hashable.
    others = [c.ref for c in changes if c.ref.kind != NODE.kind]
    fetched = dict(zip(others, concurrently(others, writer.get, writer.settings.workers), strict=True))
    return [nodes.get(c.ref.name) if c.ref.kind == NODE.kind else fetched[c.ref] for c in changes]


def _managers(change: Change, obj: dict[str, Any] | None) -> tuple[str, ...]:
    """Field managers other than kai-gitops that own a field this change sets (e.g. Helm on default queues)."""
    owners = []
    for entry in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        fields = entry.get("fieldsV1") or {}
        manager = str(entry.get("manager") or "")
        if manager and manager != FIELD_MANAGER and any(_owns(fields, f.path) for f in change.fields):
            owners.append(manager)
    return tuple(sorted(set(owners)))


def _owns(fields: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = fields
    for key in path:
        if not isinstance(node, dict) or f"f:{key}" not in node:
            return False
        node = node[f"f:{key}"]
    return True
