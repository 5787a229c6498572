"""From findings to a Plan: the differ's Queue fixes, the shared-cluster label changes, the operator's commands.

Pure: reads the findings, the desired cluster and the live state it was judged on; no I/O.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import replace

from reconciler.checks.kai_config_diff import config_patch
from reconciler.checks.node_labels import LABEL_RULES, NodeLabelChange, label_changes, unresolvable_nodes
from reconciler.checks.ownership import HOLDING_RULES, held_paths, overlaps
from reconciler.core.jsonvalue import JSONObject
from reconciler.core.redact import redact
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CONFIG, NODE, QUEUE, SCHEDULING_SHARD
from reconciler.core.show import truncate_text
from reconciler.findings.builtin_rules import SENSITIVE_CHANGE
from reconciler.findings.finding import Action, Finding, Kind
from reconciler.findings.policy_rules import SHARED_UNLABELLED
from reconciler.model.desired import DesiredCluster, QueueOrigin
from reconciler.model.live import LiveState
from reconciler.model.queues import QueueSpec, queue_spec_from_values
from reconciler.model.sensitive import SensitiveAllow, category
from reconciler.plans.plan import Change, ClusterIdentity, FieldChange, FieldPath, Operation, OperatorAction, Plan
from reconciler.plans.validate import check_changes
from reconciler.plans.values import leaves, queue_update_fields, same_value, stored_value
from reconciler.plans.writable import LABEL_PATH, Values, planned_write
from reconciler.reconcile.write_scope import WriteScope
from reconciler.report.report import GitInfo

SPEC_KINDS = {CONFIG.kind: "configs.kai.scheduler", SCHEDULING_SHARD.kind: "schedulingshards.kai.scheduler"}
SENSITIVE_TEXT = 500  # a plan's free text is short: at most 512 characters (plans/validate.py)
HELM_NOTE = (
    "Default queues are created by Helm on install and kept (helm.sh/resource-policy: keep); the chart "
    "never renders them again, so kai-gitops's merge patch takes over these fields without a fight."
)


def build_plan(
    findings: list[Finding],
    desired: DesiredCluster,
    live: LiveState,
    *,
    git: GitInfo | None,
    identity: ClusterIdentity | None,
) -> Plan:
    active = [f for f in findings if f.waived_by is None]
    owned = held_paths(findings)  # a waiver accepts the finding; the field stays its controller's
    # Another controller's field is out first: it is no one's to write, so neither held for an upgrade nor left to
    # a person with a `kubectl patch` (that would start the fight KAI-D-008 avoids).
    spec_changes, held = _spec_changes(
        active, WriteScope(desired, live), live, desired.config.allow_sensitive_writes, owned
    )
    changes = _unheld(_queue_changes(active, live), owned) + spec_changes + _label_changes(desired, live)
    check_changes(changes, "the plan")  # the planner cannot propose a write the applier would refuse
    settled = {c.ref for c in changes} | {h.subject for h in held if h.subject is not None}
    settled_rules = _settled_label_rules(desired, live, changes)
    operator = (*held, *(_operator(f) for f in active if _for_operator(f, settled, settled_rules, set(owned))))
    defaults = {q.spec.name for q in desired.queues if q.origin == QueueOrigin.DEFAULT_QUEUE}
    notes = (HELM_NOTE,) if any(c.ref.kind == QUEUE.kind and c.ref.name in defaults for c in changes) else ()
    return Plan(desired.name, git, identity, tuple(changes), operator, notes)


def _unheld(changes: list[Change], held: Mapping[ObjectRef, tuple[FieldPath, ...]]) -> list[Change]:
    """`changes` without the fields another controller owns (checks/ownership.py: KAI-D-008 names each one);
    a change left with no field is dropped. A create has no owner yet."""
    kept: list[Change] = []
    for change in changes:
        paths = held.get(change.ref, ())
        if change.operation is Operation.UPDATE and paths:
            fields = tuple(f for f in change.fields if not overlaps(f.path, paths))
            if not fields:
                continue
            change = replace(change, fields=fields)
        kept.append(change)
    return kept


def _queue_changes(findings: list[Finding], live: LiveState) -> list[Change]:
    creates: list[Change] = []
    updates: list[Change] = []
    for f in findings:
        if f.kind is not Kind.DRIFT or f.fix is None or f.fix.patch is None or f.subject is None:
            continue
        if f.subject.kind != QUEUE.kind:
            continue
        if f.fix.action is Action.CREATE:
            manifest = f.fix.patch
            fields = tuple(FieldChange(path, None, value) for path, value in leaves(manifest.get("spec"), ("spec",)))
            creates.append(Change(f.subject, Operation.CREATE, fields, (f.rule_id,), f.fix.description, manifest))
        elif f.fix.action is Action.UPDATE:
            live_spec = live.queues.get(f.subject.name) or QueueSpec(f.subject.name, None, None)
            fields = queue_update_fields(f.fix.patch, live_spec)
            if fields:
                updates.append(Change(f.subject, Operation.UPDATE, fields, (f.rule_id,), f.fix.description))
    return _parents_first(creates) + sorted(updates, key=lambda c: c.ref.name)


def _spec_changes(
    findings: list[Finding],
    scope: WriteScope,
    live: LiveState,
    allowed: tuple[SensitiveAllow, ...],
    owned: Mapping[ObjectRef, tuple[FieldPath, ...]],
) -> tuple[list[Change], list[OperatorAction]]:
    """kai-config and SchedulingShard spec patches: every field of the finding's patch, at the granularity the
    allowed writes name it. A patch with a field no plan may write is left to the operator, whole; a field
    the write scope holds back (no intent, not served, waiting for the upgrade) is an operator item, and so is a
    security-sensitive field the cluster's allowSensitiveWrites does not name (KAI-S-001), left to a person."""
    changes: list[Change] = []
    held_items: list[OperatorAction] = []
    for f in findings:
        if (
            f.kind is not Kind.DRIFT
            or f.fix is None
            or f.fix.action is not Action.UPDATE
            or f.fix.patch is None
            or f.subject is None
            or f.subject.kind not in (CONFIG.kind, SCHEDULING_SHARD.kind)
        ):
            continue
        stored = _stored(live, f.subject)
        write = planned_write(f.subject, Operation.UPDATE)
        if stored is None or write is None or write.fields is None:
            continue
        writable = _writable_fields(f.fix.patch, write.fields, stored, ()) or []
        theirs = owned.get(f.subject, ())
        fields, held = scope.split(f.subject, [c for c in writable if not overlaps(c.path, theirs)])
        kept, sensitive = _split_sensitive(f.subject, fields, allowed)
        if kept:
            changes.append(Change(f.subject, Operation.UPDATE, tuple(kept), (f.rule_id,), f.fix.description))
        if held:
            held_items.append(scope.operator_item(f, held))
        if sensitive:
            held_items.append(_left_to_a_person(f.subject, sensitive))
    return changes, held_items


def _split_sensitive(
    ref: ObjectRef, fields: list[FieldChange], allowed: tuple[SensitiveAllow, ...]
) -> tuple[list[FieldChange], list[FieldChange]]:
    """The fields self-heal may write, and the security-sensitive ones no allowSensitiveWrites entry names."""
    kept: list[FieldChange] = []
    sensitive: list[FieldChange] = []
    for field in fields:
        named = any(a.allows(ref.kind, ref.name, field.path) for a in allowed)
        (sensitive if category(field.path[1:]) is not None and not named else kept).append(field)
    return kept, sensitive


def _left_to_a_person(ref: ObjectRef, fields: list[FieldChange]) -> OperatorAction:
    names = ", ".join(f.dotted() for f in fields)
    description = truncate_text(
        f"{ref.kind} {ref.name}: {names} {'is' if len(fields) == 1 else 'are'} security-sensitive (KAI-S-001), "
        "left to a person; to let self-heal write a field, name it in the cluster's allowSensitiveWrites",
        SENSITIVE_TEXT,
    )
    patch = json.dumps(
        redact(config_patch([(".".join(f.path[1:]), f.before, f.after, None) for f in fields])),
        separators=(",", ":"),
        sort_keys=True,
    )
    # Git's values are pasted into a shell by whoever runs it: quoted, a `'` in a value stays in the value.
    command = f"kubectl patch {SPEC_KINDS[ref.kind]} {shlex.quote(ref.name)} --type merge -p {shlex.quote(patch)}"
    return OperatorAction(SENSITIVE_CHANGE.id, ref, description, command)


def _stored(live: LiveState, ref: ObjectRef) -> JSONObject | None:
    if ref.kind == CONFIG.kind:
        return {"spec": live.kai_config.spec} if live.kai_config is not None else None
    shard = live.shards.get(ref.name)
    if shard is None and ref.name == "default" and live.shard is not None:
        return {"spec": live.shard}
    return {"spec": shard.spec} if shard is not None else None


def _writable_fields(
    patch: object, table: Mapping[FieldPath, Values], stored: JSONObject, prefix: FieldPath
) -> list[FieldChange] | None:
    """The changed fields `patch` sets, or None when it sets one outside `table`."""
    if prefix in table:
        before = stored_value(stored, prefix)
        same = before is not None and patch is not None and same_value(before, patch)
        return [] if same or (before is None and patch is None) else [FieldChange(prefix, before, patch)]
    if not isinstance(patch, dict) or not any(p[: len(prefix)] == prefix for p in table):
        return None
    found: list[FieldChange] = []
    for key, value in patch.items():
        more = _writable_fields(value, table, stored, (*prefix, str(key)))
        if more is None:
            return None
        found += more
    return found


def _parents_first(creates: list[Change]) -> list[Change]:
    """A Queue's parentQueue should exist when the child is created: order by depth among the creates."""
    parents = {c.ref.name: queue_spec_from_values(c.manifest or {}).parent for c in creates}

    def depth(name: str) -> int:
        seen: set[str] = set()
        while (parent := parents.get(name)) in parents and parent not in seen:
            seen.add(name)
            name = parent
        return len(seen)

    return sorted(creates, key=lambda c: (depth(c.ref.name), c.ref.name))


def _label_changes(desired: DesiredCluster, live: LiveState) -> list[Change]:
    if not desired.shared_provenance.writable:
        return []  # no intent declared: nothing to write toward (NVCA-S-003)
    return [_label_change(c) for c in label_changes(desired.shared, live)]


def _label_change(change: NodeLabelChange) -> Change:
    verb = "set nvca.nvcf.nvidia.io/schedule=true on" if change.after else "remove nvca.nvcf.nvidia.io/schedule from"
    return Change(
        NODE.ref(change.node),
        Operation.UPDATE,
        (FieldChange(LABEL_PATH, change.before, change.after),),
        (change.rule,),
        f"{verb} node {change.node}",
    )


def _settled_label_rules(desired: DesiredCluster, live: LiveState, changes: list[Change]) -> set[str]:
    """Label rules every finding of which the plan settles (a missing intended node keeps S-011 open)."""
    rules = {r for c in changes if c.ref.kind == NODE.kind for r in c.rules}
    if unresolvable_nodes(desired.shared, live):
        rules.discard(SHARED_UNLABELLED.id)
    return rules & LABEL_RULES


def _for_operator(f: Finding, settled: set[ObjectRef], settled_rules: set[str], held: set[ObjectRef]) -> bool:
    if f.rule_id in HOLDING_RULES:
        return True  # the fields left alone (KAI-D-008, -009): the operator changes them at their source
    if f.subject is not None and f.subject in held and f.kind is Kind.DRIFT:
        return False  # its KAI-D-008 says where to change the held fields; a kubectl patch would start a fight
    if f.subject is not None and f.subject in settled:
        return False  # the plan changes this object; what is left of the finding shows on the next run
    if f.rule_id in settled_rules:
        return False
    if f.fix is None:
        return False
    if f.fix.action is not Action.NONE:  # a fix the plan could not make (a field no plan may write)
        return f.fix.action is Action.UPDATE and f.subject is not None and bool(f.fix.command)
    return f.kind is Kind.DRIFT or bool(f.fix.command)


def _operator(f: Finding) -> OperatorAction:
    assert f.fix is not None
    return OperatorAction(f.rule_id, f.subject, f.fix.description or f.message, f.fix.command)
