"""Who last set each drifted field: the `managedFields` entry whose field set owns it (docs/policies.md#who-changed-it).

A field set (fieldsV1, structured-merge-diff's encoding) is a tree: `f:<name>` a field, `k:{…}` a list item
by its keys, `v:<json>` a set member, `i:<n>` an item by index, `.` the field itself. A manager owns a path
when its tree holds the whole path, or a leaf `{}` on the way (it set that value whole, e.g. an atomic
list). Several may own one field (two appliers of the same value): the one that wrote last is named.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

from reconciler.checks.node_labels import LABEL_RULES, label_changes
from reconciler.core.jsonvalue import JSONObject, JSONValue
from reconciler.core.resources import CONFIG, NODE, SCHEDULING_SHARD
from reconciler.findings.attribution import Attribution, ReleaseRevision
from reconciler.findings.finding import Finding
from reconciler.model.config import SharedClusterIntent
from reconciler.model.live import SCHEDULE_LABEL, LiveState
from reconciler.model.managed_fields import ManagedEntry, ObjectManagers

FieldPath = tuple[str | int, ...]
# Field managers that are Helm: the helm CLI (its binary's name) and Flux's helm-controller
HELM_MANAGERS = frozenset({"helm", "helm-controller"})


def attribute(findings: list[Finding], live: LiveState, shared: SharedClusterIntent | None) -> list[Finding]:
    """`findings` with `attribution` filled in on each drift whose fields are known; `shared` (Git's
    shared-cluster intent, None without Git) says which node labels drifted."""
    return [_attributed(f, live, shared) for f in findings]


def _attributed(finding: Finding, live: LiveState, shared: SharedClusterIntent | None) -> Finding:
    # An object read without managedFields (a snapshot written before they were kept) says nothing either way.
    fields = [f for f in drifted_fields(finding, live, shared) if f[:2] in live.managers]
    if not fields:
        return finding
    return replace(
        finding, attribution=tuple(_attribution(live, kind, name, shown, path) for kind, name, shown, path in fields)
    )


def drifted_fields(
    finding: Finding, live: LiveState, shared: SharedClusterIntent | None
) -> Iterator[tuple[str, str, str, FieldPath]]:
    """(kind, object name, field as the finding shows it, path in the object) of each drifted field: a drift's
    field changes, in its subject (a Helm release's are paths in its values, which no manager owns: `_attributed`
    drops them); a node label rule's nodes, whose changes the finding does not carry (one finding may name
    several nodes: the label changes that settle it are worked out here, as the planner does)."""
    if finding.subject is not None:
        for field in finding.changes:
            yield finding.subject.kind, finding.subject.name, field.shown, field.path
    name = finding.subject.name if finding.subject else ""
    if finding.rule_id in LABEL_RULES and shared is not None:
        one_node = name if finding.subject and finding.subject.kind == NODE.kind else None  # NVCA-S-012: per node
        for change in label_changes(shared, live):
            if change.rule == finding.rule_id and change.before is not None and one_node in (None, change.node):
                yield (
                    NODE.kind,
                    change.node,
                    f"node/{change.node} label {SCHEDULE_LABEL}",
                    ("metadata", "labels", SCHEDULE_LABEL),
                )


def _attribution(live: LiveState, kind: str, name: str, shown: str, path: FieldPath) -> Attribution:
    managers = live.managers.get((kind, name), ObjectManagers())
    entry = owner(managers.entries, path, live_object(live, kind, name))
    if entry is None:
        return Attribution(shown)
    release = _release(live, managers, entry.time) if entry.manager in HELM_MANAGERS else None
    return Attribution(shown, entry.manager, entry.operation, entry.subresource, entry.time, release)


def live_object(live: LiveState, kind: str, name: str) -> JSONValue:
    """What list items are matched against (`k:`/`v:` keys): the specs that may hold lists."""
    if kind == CONFIG.kind and live.kai_config is not None:
        return {"spec": live.kai_config.spec}
    if kind == SCHEDULING_SHARD.kind and name in live.shards:
        return {"spec": live.shards[name].spec}
    return None


def _release(live: LiveState, managers: ObjectManagers, written: str | None) -> ReleaseRevision | None:
    """The release the object's annotations name, at the revision that wrote the field: the newest deployed at
    or before the write (Helm stamps a revision, then writes; a manager's time changes only when its write
    changed something, so an upgrade that left the field alone does not move it)."""
    if managers.release is None:
        return None
    namespace, name = managers.release
    history = live.release_history.get((namespace, name))
    if not history:  # uninstalled, or its Secrets could not be read: the annotations still name it
        return ReleaseRevision(name, namespace)
    before = [d for d in history if _at_or_before(d.last_deployed, written)]
    deploy = before[-1] if before else history[-1]
    return ReleaseRevision(name, namespace, deploy.revision, deploy.status or None, deploy.last_deployed or None)


def _at_or_before(deployed: str, written: str | None) -> bool:
    """To the second: managedFields times have no fraction, Helm's have nanoseconds."""
    deployed_at, written_at = _seconds(deployed), _seconds(written)
    return deployed_at is not None and written_at is not None and deployed_at <= written_at


def _seconds(stamp: str | None) -> int | None:
    try:
        return int(datetime.fromisoformat(stamp).timestamp()) if stamp else None
    except ValueError:
        return None


def owner(entries: tuple[ManagedEntry, ...], path: FieldPath, live: JSONValue = None) -> ManagedEntry | None:
    """The entry that owns `path` (the latest writer among several); one owning only fields below it when
    none owns it whole; None when no entry owns any of it."""
    whole, part = [], []
    for entry in entries:
        reach = _reach(entry.fields, path, live)
        if reach == "whole":
            whole.append(entry)
        elif reach == "part":
            part.append(entry)
    candidates = whole or part
    return max(candidates, key=lambda e: e.time or "") if candidates else None


def _reach(fields: JSONObject, path: FieldPath, live: JSONValue) -> str | None:
    """ "whole" when the field set owns the value at `path`, "part" when only fields below it, else None."""
    node: JSONValue = fields
    for depth, step in enumerate(path, 1):
        if not isinstance(node, dict):
            return None
        key = _key(node, step, live)
        if key is None:
            return None
        node, live = node[key], _child(live, step)
        if node == {} and depth < len(path):
            return "whole"  # a leaf on the way: it set this value whole (an atomic list or map)
    if not isinstance(node, dict):
        return None
    return "whole" if node == {} or "." in node else "part"


def _key(node: JSONObject, step: str | int, live: JSONValue) -> str | None:
    """The key under which the field set spells `step`: a field, or a list item by index, keys or value."""
    if isinstance(step, str) and f"f:{step}" in node:
        return f"f:{step}"
    index = step if isinstance(step, int) else int(step) if step.isdigit() else None
    if index is None:
        return None
    if f"i:{index}" in node:
        return f"i:{index}"
    item = live[index] if isinstance(live, list) and index < len(live) else None
    return next((k for k in node if _is_item(k, item)), None) if item is not None else None


def _is_item(key: str, item: JSONValue) -> bool:
    if not key.startswith(("k:", "v:")):
        return False
    try:
        spelt = json.loads(key[2:])
    except ValueError:
        return False
    if key.startswith("v:"):
        return bool(spelt == item)
    return isinstance(spelt, dict) and isinstance(item, dict) and all(item.get(k) == v for k, v in spelt.items())


def _child(live: JSONValue, step: str | int) -> JSONValue:
    if isinstance(live, dict):
        return live.get(str(step))
    if isinstance(live, list):
        index = step if isinstance(step, int) else int(step) if step.isdigit() else None
        return live[index] if index is not None and index < len(live) else None
    return None
