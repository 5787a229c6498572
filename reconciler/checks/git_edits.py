"""Which findings Git can fix, and the exact edits (values/env/queue files into canonical form: docs/git-hosts.md).

The rules say what is wrong and where (doc + YAML path); canonical-kai-values.yaml and NVCA's
gate spelling say what is right. Edits are computed here, beside the checks, so every output can show
them and `--fix-git` only has to apply them. A finding whose fix is a choice (enable Grove or disable
Dynamo; drop HelmAllowCPUNodes or add -HelmResourceConstraints) gets no edit: a person decides.
"""

from __future__ import annotations

import dataclasses
import functools
import json

from reconciler.core.jsonvalue import JSONValue
from reconciler.core.refs import YamlPath
from reconciler.core.resources import QUEUE
from reconciler.findings.finding import EditOp, Finding, GitEdit
from reconciler.findings.policy_rules import GitFix, git_fix
from reconciler.model.desired import NVCA_CHART_DEFAULT_GATES, DesiredCluster, QueueOrigin, canonical_kai_values
from reconciler.model.gates import ADDON_GATES, gate_name, split_gate_string
from reconciler.model.queues import RESOURCES
from reconciler.yamlio.document import YamlDoc

KAI_SCHEDULER_GATE = "KAIScheduler"
UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
# Fixes that write canonical values (docs/policies.md#canonical-kai-values): they skip keys KAI-V-011 respells.
_CANONICAL_FIXES = frozenset({GitFix.CANONICAL_VALUE, GitFix.WRITE_OUT})


def attach_git_edits(findings: list[Finding], desired: DesiredCluster | None) -> list[Finding]:
    """The findings, each with the Git edits that fix it (unchanged when Git has none for it)."""
    if desired is None:
        return findings
    respelt = _respelt_keys(desired) if any(git_fix(f.rule_id) in _CANONICAL_FIXES for f in findings) else []
    out = []
    for finding in findings:
        edits = git_edits_for(finding, desired, respelt)
        if edits and finding.fix is not None:
            finding = dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, git_edits=edits))
        out.append(finding)
    return out


def git_edits_for(
    finding: Finding, desired: DesiredCluster, respelt: list[YamlPath] | None = None
) -> tuple[GitEdit, ...]:
    """`respelt`: where KAI-V-011 renames misspelt keys to (computed when not given). The rule's `GitFix`
    (findings/policy_rules.py) says which edit; none for a rule without one."""
    fix = git_fix(finding.rule_id)
    if fix in _CANONICAL_FIXES and respelt is None:
        respelt = _respelt_keys(desired)
    if fix is GitFix.CANONICAL_VALUE and finding.location is not None:
        return _canonical_edits(desired, finding.location.path, respelt or [])
    if fix is GitFix.WRITE_OUT:
        return _canonical_edits(desired, (), respelt or [], only_missing=True)
    if fix is GitFix.GATE_SPELLING and finding.location is not None:
        return _gate_spelling_edits(desired, finding.location.path)
    if fix is GitFix.KAI_GATE:
        return _kai_gate_edits(desired)
    if fix is GitFix.QUEUE_FILE and finding.subject is not None and finding.subject.kind == QUEUE.kind:
        return _queue_file_edits(desired, finding.subject.name)
    return ()


def canonical_rank(edit: GitEdit) -> tuple[str, int, int]:
    """Where an edit's key sits in canonical-kai-values.yaml's order, so added keys read in that order."""
    order = _canonical_order()
    path = tuple(edit.path)
    for index, leaf in enumerate(order):
        if leaf[: len(path)] == path or path[: len(leaf)] == leaf:
            return edit.file, edit.doc, index
    return edit.file, edit.doc, len(order)


@functools.cache
def _canonical_order() -> tuple[YamlPath, ...]:
    return tuple(path for path, _ in _leaves(canonical_kai_values(), ()))


# -- KAI values (standalone) ------------------------------------------------------------------------------


def _canonical_edits(
    desired: DesiredCluster, path: YamlPath, respelt: list[YamlPath], *, only_missing: bool = False
) -> tuple[GitEdit, ...]:
    doc_id = desired.kai_values_doc
    if doc_id is None:  # add-on mode: the stack applies the canonical values itself
        return ()
    doc = desired.docs[doc_id]
    edits = []
    for leaf, want in _leaves(_get(canonical_kai_values(), path), path):
        if any(leaf[: len(key)] == key for key in respelt):
            continue  # a misspelt key is renamed to this one (KAI-V-011): its value is the user's, not ours
        if only_missing and _get(desired.kai_values_user, leaf) is not None:
            continue
        got = _get(desired.kai_values_user, leaf)
        if got is None or not _same(got, want):
            edits.append(GitEdit(doc.file, leaf, want))
    return tuple(edits)


def _respelt_keys(desired: DesiredCluster) -> list[YamlPath]:
    """The paths misspelt keys of the values file are renamed to by their KAI-V-011 edits."""
    from reconciler.checks.values_keys import values_key_findings

    return [
        (*edit.path[:-1], edit.value)
        for finding in values_key_findings(desired)
        if finding.fix
        for edit in finding.fix.git_edits
        if edit.op is EditOp.RENAME and edit.doc == 0
    ]


def _leaves(value: JSONValue, path: YamlPath) -> list[tuple[YamlPath, JSONValue]]:
    if isinstance(value, dict):
        return [leaf for key, child in value.items() for leaf in _leaves(child, (*path, key))]
    return [] if value is None else [(path, value)]


def _get(data: JSONValue, path: YamlPath) -> JSONValue:
    for part in path:
        if not isinstance(data, dict) or not isinstance(part, str) or part not in data:
            return None
        data = data[part]
    return data


def _same(got: JSONValue, want: JSONValue) -> bool:
    """Equal as Helm renders them: `-1.0` is -1, but `true` is not 1."""
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    return bool(got == want)


# -- NVCA feature gates -----------------------------------------------------------------------------------


@functools.cache
def known_gates() -> dict[str, str]:
    """Lower-cased name -> NVCA's spelling, from the shipped policy data (the same list NVCA-G-004/5 use)."""
    from reconciler.checks.policy.pack import shipped_data_files

    for path in shipped_data_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        known = (((data.get("nvca") or {}).get("feature_gates") or {}).get("known")) or []
        if known:
            return {name.lower(): name for name in known}
    return {}


def _gate_spelling_edits(desired: DesiredCluster, item_path: YamlPath) -> tuple[GitEdit, ...]:
    gates = desired.gates
    if gates is None or not item_path or not isinstance(item_path[-1], int):
        return ()
    fixed = _fixed_spellings(gates.user)
    index = item_path[-1]
    if index not in fixed:
        return ()
    if fixed[index].startswith("-") and fixed[index][1:] in _addon_needed_gates(desired):
        return _remove_gate_item(desired, index)  # `-KAIScheduler` would break the add-on: NVCA-G-005 says so
    return _set_gate_items(desired, {index: fixed[index]})


def _addon_needed_gates(desired: DesiredCluster) -> set[str]:
    """Gates the add-on stack turns on for an enabled add-on that needs them (add-on mode only)."""
    if desired.config.mode != "addon":
        return set()
    return {gate for addon, gate in ADDON_GATES.items() if desired.addons.get(addon)}


def _remove_gate_item(desired: DesiredCluster, index: int) -> tuple[GitEdit, ...]:
    gates = desired.gates
    assert gates is not None
    doc = desired.docs[gates.doc]
    raw = _in_file(doc, gates.path)
    if isinstance(raw, str):
        return (
            GitEdit(
                doc.file, gates.path, _join_like(raw, [p for i, p in enumerate(split_gate_string(raw)) if i != index])
            ),
        )
    if raw is None:  # the list comes from the stack's base file: the env file gets the list without it
        return (GitEdit(doc.file, gates.path, [item for i, item in enumerate(gates.user) if i != index]),)
    return (GitEdit(doc.file, (*gates.path, index), None, EditOp.REMOVE),) if isinstance(raw, list) else ()


def _kai_gate_edits(desired: DesiredCluster) -> tuple[GitEdit, ...]:
    """A misspelled KAIScheduler is corrected in place; otherwise the gate is appended, keeping the others."""
    gates = desired.gates
    if gates is None:
        return ()
    misspelled = {i: text for i, text in _fixed_spellings(gates.user).items() if gate_name(text) == KAI_SCHEDULER_GATE}
    if misspelled:
        return _set_gate_items(desired, misspelled)
    doc = desired.docs[gates.doc]
    raw = _in_file(doc, gates.path)
    file = doc.file
    if raw is None:  # no list in the file: the chart default (NVCA values) or the stack base (env) applies
        current = list(NVCA_CHART_DEFAULT_GATES) if gates.doc == "nvca_values" else list(gates.user)
        return (GitEdit(file, gates.path, [*current, KAI_SCHEDULER_GATE]),)
    if isinstance(raw, str):
        return (GitEdit(file, gates.path, _join_like(raw, [*split_gate_string(raw), KAI_SCHEDULER_GATE])),)
    return (GitEdit(file, gates.path, KAI_SCHEDULER_GATE, EditOp.APPEND),)


def _fixed_spellings(user: list[str]) -> dict[int, str]:
    """Index -> corrected item for every gate item that is a wrong-case spelling of a known gate."""
    known = known_gates()
    fixed = {}
    for i, item in enumerate(user):
        name = gate_name(item)
        right = known.get(name.strip().lower())
        if right is not None and right != name:
            sign = "-" if item.strip().startswith("-") else ""
            fixed[i] = sign + right
    return fixed


def _set_gate_items(desired: DesiredCluster, items: dict[int, str]) -> tuple[GitEdit, ...]:
    gates = desired.gates
    assert gates is not None
    doc = desired.docs[gates.doc]
    raw = _in_file(doc, gates.path)
    if raw is None:  # the list comes from the stack's base file: the env file gets the whole corrected list
        return (GitEdit(doc.file, gates.path, [items.get(i, item) for i, item in enumerate(gates.user)]),)
    if isinstance(raw, str):  # one comma-joined string: the string is the value to rewrite
        parts = split_gate_string(raw)
        for i, text in items.items():
            parts[i] = text
        return (GitEdit(doc.file, gates.path, _join_like(raw, parts)),)
    if not isinstance(raw, list):
        return ()
    return tuple(GitEdit(doc.file, (*gates.path, i), text) for i, text in sorted(items.items()))


def _in_file(doc: YamlDoc, path: YamlPath) -> JSONValue:
    """The value at `path` only when the file itself writes it (the env doc's data has the base merged in)."""
    return doc.get(path) if tuple(path) in doc.positions else None


def _join_like(original: str, parts: list[str]) -> str:
    return (", " if ", " in original else ",").join(parts)


# -- queue files ------------------------------------------------------------------------------------------


def _queue_file_edits(desired: DesiredCluster, name: str) -> tuple[GitEdit, ...]:
    for queue in desired.queues:
        if queue.origin != QueueOrigin.QUEUE_FILE or queue.spec.name != name:
            continue
        doc = desired.docs[queue.doc]
        index = int(queue.doc.rsplit(":", 1)[1])
        edits = []
        for res in RESOURCES:
            for key, want in UNLIMITED.items():
                path: YamlPath = ("spec", "resources", res, key)
                got = doc.get(path)
                if got is None or not _same(got, want):
                    edits.append(GitEdit(doc.file, path, want, doc=index))
        return tuple(edits)
    return ()
