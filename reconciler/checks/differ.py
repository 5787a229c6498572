"""Desired vs live for the objects Git defines: default and extra Queues, the SchedulingShard, release values.

Objects are compared with `==` first and only those that differ are deep-diffed: deepdiff on whole trees
is slow (48 s on two 50k-item dicts), and almost everything is equal in a healthy cluster.
"""

from __future__ import annotations

from reconciler.checks.kai_config_diff import diff_kai_config, normalise_numbers
from reconciler.core.jsonvalue import JSONObject, JSONScalar, JSONValue
from reconciler.core.redact import redact, redact_at
from reconciler.core.refs import release_ref
from reconciler.core.resources import QUEUE, SCHEDULING_SHARD, queue_ref
from reconciler.core.show import show_value
from reconciler.findings.builtin_rules import QUEUE_DRIFT, QUEUE_MISSING, RELEASE_VALUES_DRIFT, SHARD_DRIFT
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.desired import RELEASE_NAME, RELEASE_NAMESPACE, DesiredCluster, ExpectedQueue, QueueOrigin
from reconciler.model.live import LiveState
from reconciler.model.queues import FIELDS, RESOURCES, QueueSpec, field_path, same_number

_INSTALL_ONLY = (
    "The chart renders the default queues only on `helm install` and keeps them "
    "(helm.sh/resource-policy: keep), so `helm upgrade` will not fix this."
)


def diff(desired: DesiredCluster, live: LiveState) -> list[Finding]:
    findings: list[Finding] = []
    if live.queue_kind_served:
        for expected in desired.queues:
            findings.extend(_diff_queue(desired, expected, live.queues.get(expected.spec.name)))
    findings.extend(_diff_shard(desired, live))
    findings.extend(_diff_release_values(desired, live))
    findings.extend(diff_kai_config(desired, live, desired.kai_upgrade_command))
    return findings


def _diff_queue(desired: DesiredCluster, expected: ExpectedQueue, actual: QueueSpec | None) -> list[Finding]:
    ref = queue_ref(expected.spec.name)
    if actual is None:
        note = f" {_INSTALL_ONLY}" if expected.origin == QueueOrigin.DEFAULT_QUEUE else ""
        return [
            QUEUE_MISSING.finding(
                Kind.DRIFT,
                f"Queue {expected.spec.name} does not exist.{note}",
                desired.name,
                subject=ref,
                location=desired.locate(expected.doc, expected.paths["parent"]),
                desired=queue_manifest(expected.spec),
                fix=Fix(Action.CREATE, f"create Queue {expected.spec.name}", patch=queue_manifest(expected.spec)),
            )
        ]
    changes = queue_changes(expected.spec, actual)
    if not changes:
        return []
    fix = Fix(Action.UPDATE, f"patch Queue {expected.spec.name} spec", patch=queue_patch(expected.spec))
    if expected.origin == QueueOrigin.DEFAULT_QUEUE and not _unlimited(expected.spec):
        # Git itself breaks NVCA here: applying it would make a healthy queue unhealthy. Fix Git first.
        fix = Fix(
            Action.NONE,
            "Git asks for a limited default queue, which NVCA rejects: fix the values first (KAI-Q-001), then re-run",
        )
    first_key = changes[0][0]
    path = expected.paths.get(first_key, expected.paths["parent"])
    summary = ", ".join(f"{key} {show_value(live)} → {show_value(want)}" for key, live, want in changes)
    note = f" {_INSTALL_ONLY}" if expected.origin == QueueOrigin.DEFAULT_QUEUE else ""
    return [
        QUEUE_DRIFT.finding(
            Kind.DRIFT,
            f"Queue {expected.spec.name} differs from Git: {summary}.{note}",
            desired.name,
            subject=ref,
            location=desired.locate(expected.doc, path),
            desired={k: w for k, _, w in changes},
            live={k: v for k, v, _ in changes},
            changes=tuple(DriftedField(field_path(key), live, want, key) for key, live, want in changes),
            extra={"note": note.strip()},
            fix=fix,
        )
    ]


def _unlimited(spec: QueueSpec) -> bool:
    return spec.resources is not None and all(spec.triple(res).is_unlimited() for res in RESOURCES)


QueueChange = tuple[str, JSONScalar, JSONScalar]  # field, live value, desired value


def queue_changes(want: QueueSpec, live: QueueSpec) -> list[QueueChange]:
    """(field, live value, desired value) for every field that differs; numbers compare as floats."""
    changes: list[QueueChange] = []
    if (want.parent or None) != (live.parent or None):
        changes.append(("parent", live.parent, want.parent))
    if live.resources is None:
        changes.append(("resources", None, "set"))
    for res in RESOURCES:
        w, v = want.triple(res), live.triple(res)
        for key, attr in FIELDS:
            a: float = getattr(v, attr)
            b: float = getattr(w, attr)
            if live.resources is None or not same_number(a, b):
                changes.append((f"{res}.{key}", a, b))
    return changes


def queue_manifest(spec: QueueSpec) -> JSONObject:
    return {
        "apiVersion": QUEUE.api_version,
        "kind": QUEUE.kind,
        "metadata": {"name": spec.name},
        "spec": _queue_spec(spec),
    }


def queue_patch(spec: QueueSpec) -> JSONObject:
    return {"spec": {**_queue_spec(spec), "parentQueue": spec.parent}}


def _queue_spec(spec: QueueSpec) -> JSONObject:
    body: JSONObject = {"resources": {res: _numbers(spec.triple(res).to_dict()) for res in RESOURCES}}
    if spec.parent:
        body["parentQueue"] = spec.parent
    return body


def _numbers(triple: dict[str, float]) -> JSONObject:
    return {k: int(v) if float(v).is_integer() else v for k, v in triple.items()}


def _diff_shard(desired: DesiredCluster, live: LiveState) -> list[Finding]:
    expected = desired.shard
    if expected is None:
        return []
    ref = SCHEDULING_SHARD.ref("default")
    location = desired.locate(expected.doc, expected.path)
    command = desired.kai_upgrade_command
    if live.shard is None:
        if not live.queue_kind_served:
            return []  # KAI not installed at all: the NVCA/CRD findings say so once
        return [
            SHARD_DRIFT.finding(
                Kind.DRIFT,
                "SchedulingShard default does not exist",
                desired.name,
                subject=ref,
                location=location,
                desired=redact(expected.spec),
                fix=Fix(Action.NONE, "re-apply the KAI chart values", command=command),
            )
        ]
    actual = {key: live.shard.get(key) for key in expected.spec}
    if _normalise(actual) == _normalise(expected.spec) or (live.from_snapshot and redact(expected.spec) == actual):
        return []  # read back from a snapshot file, a credential is masked: compared as the file shows it
    changed = _changed_paths(expected.spec, actual)
    return [
        SHARD_DRIFT.finding(
            Kind.DRIFT,
            f"SchedulingShard default differs from the KAI values at {', '.join(map('.'.join, changed))}",
            desired.name,
            subject=ref,
            location=location,
            desired=redact(expected.spec),
            live=redact(actual),
            changes=_field_changes(changed, actual, expected.spec, under=("spec",)),
            fix=_shard_fix(expected.spec, command),
        )
    ]


def _shard_fix(spec: JSONObject, command: str) -> Fix:
    """A patch the plan may apply, unless a value looks like a credential: a plan and its outputs carry the
    patch as it is, so such a value is left to the operator's Helm upgrade."""
    if redact(spec) != spec:
        return Fix(Action.NONE, "re-apply the KAI chart values with Helm (kai-gitops never runs Helm)", command=command)
    return Fix(
        Action.UPDATE,
        "patch SchedulingShard default's spec to what the KAI values render (a Helm upgrade renders the same)",
        command=command,
        patch={"spec": spec},
    )


def _diff_release_values(desired: DesiredCluster, live: LiveState) -> list[Finding]:
    release = next((r for r in live.releases if (r.name, r.namespace) == (RELEASE_NAME, RELEASE_NAMESPACE)), None)
    if release is None or not desired.installs_kai:
        return []
    want = redact(desired.kai_values_user)
    have: JSONValue = release.values
    if desired.kai_values_doc is None:  # add-on: the stack adds images etc.; compare only what NVCA needs
        have = _project(have, want)
    if _normalise(have) == _normalise(want):
        return []
    changed = _changed_paths(want, have)
    paths = [".".join(path) for path in changed]
    doc, anchor = desired.release_values_anchor()
    shown = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
    return [
        RELEASE_VALUES_DRIFT.finding(
            Kind.DRIFT,
            f"Helm release {RELEASE_NAMESPACE}/{RELEASE_NAME} (revision {release.revision}) was installed with "
            f"values that differ from Git at {shown}",
            desired.name,
            subject=release_ref(RELEASE_NAME, RELEASE_NAMESPACE),
            location=desired.locate(doc, _first_path(desired, doc, changed) or anchor),
            changes=_field_changes(changed, have, want),
            fix=Fix(Action.NONE, "upgrade the release with the values from Git", command=desired.kai_upgrade_command),
        )
    ]


def _project(have: JSONValue, shape: JSONValue) -> JSONValue:
    if isinstance(shape, dict) and isinstance(have, dict):
        return {k: _project(have[k], v) for k, v in shape.items() if k in have}
    return have


def _first_path(desired: DesiredCluster, doc: str, paths: list[tuple[str, ...]]) -> tuple[str | int, ...] | None:
    if doc != desired.kai_values_doc or not paths:
        return None
    return tuple(int(p) if p.isdigit() else p for p in paths[0])


def _changed_paths(want: JSONValue, have: JSONValue) -> list[tuple[str, ...]]:
    """The path of every differing leaf, as its keys (a key may hold a dot: `nvidia.com/gpu`)."""
    from deepdiff import DeepDiff

    # threshold 0: always descend, so paths name the leaves even when the two trees share few keys
    delta = DeepDiff(_normalise(have), _normalise(want), view="tree", threshold_to_diff_deeper=0)
    paths = {tuple(str(p) for p in level.path(output_format="list")) for levels in delta.values() for level in levels}
    return sorted(paths, key=".".join)  # as the messages list them


def _field_changes(
    paths: list[tuple[str, ...]], have: JSONValue, want: JSONValue, *, under: tuple[str, ...] = ()
) -> tuple[DriftedField, ...]:
    """Each changed path with its two values, judged for secrets where they stand (`under` the object's
    `spec` for a SchedulingShard; a release's values are their own document)."""
    return tuple(
        DriftedField(
            (*under, *path),
            redact_at((*under, *path), _at(have, path)),
            redact_at((*under, *path), _at(want, path)),
            ".".join(path),
        )
        for path in paths
    )


def _at(tree: JSONValue, path: tuple[str, ...]) -> JSONValue:
    """The value at `path` (list items by their index), None where the tree has none."""
    for step in path:
        if isinstance(tree, dict):
            tree = tree.get(step)
        elif isinstance(tree, list) and step.isdigit() and int(step) < len(tree):
            tree = tree[int(step)]
        else:
            return None
    return tree


_normalise = normalise_numbers
