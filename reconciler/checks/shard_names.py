"""Shard plugin and action names, each known to the pinned KAI version or listed as custom (KAI-V-023).

Two places name them: the values that render the chart's `default` SchedulingShard (`scheduler.plugins`,
`scheduler.actions`) and the SchedulingShards kept in Git (`kaiManifestFiles`, `spec.plugins`,
`spec.actions`). The names each version knows are the model's (model/shard_plugins.py, generated from the
KAI source); a cluster's own additions are its `customSchedulerPlugins` / `customSchedulerActions`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from reconciler.core.jsonvalue import mapping_at
from reconciler.core.refs import ObjectRef, YamlPath
from reconciler.core.resources import SCHEDULING_SHARD
from reconciler.findings.builtin_rules import SHARD_NAME_UNKNOWN
from reconciler.findings.finding import Action, EditOp, Finding, Fix, GitEdit, Kind
from reconciler.model.desired import DesiredCluster
from reconciler.model.shard_plugins import ShardNames, shard_names, versions_knowing
from reconciler.model.values import chart_defaults, defaults_version_for
from reconciler.yamlio.document import YamlDoc

MAX_SUGGESTIONS = 3
SIMILARITY = 0.75  # difflib ratio: nodeplacment ~ nodeplacement, not gpupack ~ gpuspread


@dataclass(frozen=True)
class _Place:
    """One mapping of names in a Git document: whose names they are and where they sit."""

    doc: YamlDoc
    doc_index: int  # among the file's YAML documents, for the Git edit
    path: YamlPath  # the plugins or actions mapping
    action: bool
    pin: str  # the KAI version the user pinned
    names: ShardNames  # what the modelled version knows
    subject: ObjectRef | None


def shard_name_findings(desired: DesiredCluster) -> list[Finding]:
    """Every plugin or action name the pinned KAI version does not know and the cluster does not list as its own."""
    findings: list[Finding] = []
    for place in _places(desired):
        custom = desired.config.custom_scheduler_actions if place.action else desired.config.custom_scheduler_plugins
        known = place.names.known_actions if place.action else place.names.known_plugins
        written = place.doc.get(place.path)
        if not isinstance(written, dict):
            continue
        for name in written:
            if name in known or name in custom or (*place.path, name) not in place.doc.positions:
                continue
            findings.append(_finding(desired, place, str(name), sorted(known | set(custom)), set(written)))
    return findings


def _places(desired: DesiredCluster) -> list[_Place]:
    places: list[_Place] = []
    values_doc = desired.kai_values_doc
    if values_doc is not None:
        column = desired.defaults_version
        names = shard_names(column)
        chart_scheduler = mapping_at(chart_defaults(column), "scheduler")
        for key in ("plugins", "actions"):
            # a chart without the value drops it before any shard sees it (KAI-V-010 says so)
            if names is not None and key in chart_scheduler:
                places.append(
                    _Place(
                        desired.docs[values_doc],
                        0,
                        ("scheduler", key),
                        key == "actions",
                        desired.config.kai_chart_version,
                        names,
                        None,
                    )
                )
    pin = (
        desired.config.stack_kai_version
        if values_doc is None and "env" in desired.docs
        else desired.config.kai_chart_version
    )
    names = shard_names(defaults_version_for(pin))
    for manifest in desired.kai_manifests:
        if manifest.kind != SCHEDULING_SHARD.kind or names is None:
            continue
        index = int(manifest.doc.rsplit(":", 1)[1])  # "<prefix>:<document index>"
        for key in ("plugins", "actions"):
            places.append(
                _Place(
                    desired.docs[manifest.doc],
                    index,
                    ("spec", key),
                    key == "actions",
                    pin,
                    names,
                    SCHEDULING_SHARD.ref(manifest.name),
                )
            )
    return places


def _finding(desired: DesiredCluster, place: _Place, name: str, candidates: list[str], siblings: set[str]) -> Finding:
    what = "action" if place.action else "plugin"
    version = f"KAI {place.pin}" + (
        "" if _same_version(place.pin, place.names.version) else f" (modelled by {place.names.version})"
    )
    message = f'shard {what} "{name}" is not {"an" if place.action else "a"} {what} of {version}'
    elsewhere = [v for v in versions_knowing(name, action=place.action) if v != place.names.version]
    if elsewhere:
        message += f" ({', '.join(elsewhere)} {'has' if len(elsewhere) == 1 else 'have'} it)"
    message += (
        ": the operator adds it as a new action and the scheduler refuses a configuration naming an action "
        "it does not have"
        if place.action
        else ": the operator adds it as a new plugin (enabled, priority 0) and the scheduler skips it, "
        'logging only "Failed to get plugin"'
    )
    close = difflib.get_close_matches(name, candidates, n=MAX_SUGGESTIONS, cutoff=SIMILARITY)
    edits: tuple[GitEdit, ...] = ()
    if close:
        message += "; did you mean " + " or ".join(close) + "?"
        if len(close) == 1 and close[0] not in siblings:  # a rename onto a written key would merge two
            edits = (GitEdit(place.doc.file, (*place.path, name), close[0], EditOp.RENAME, place.doc_index),)
    custom_key = "customSchedulerActions" if place.action else "customSchedulerPlugins"
    remedy = (
        f"rename it to {edits[0].value}" if edits else "correct the name"
    ) + f", or list it in the cluster's {custom_key} if your scheduler image has it"
    return SHARD_NAME_UNKNOWN.finding(
        Kind.VIOLATION,
        message,
        desired.name,
        subject=place.subject,
        location=place.doc.locate((*place.path, name)),
        fix=Fix(Action.NONE, remedy, git_edits=edits),
        extra={
            "source": SHARD_NAME_UNKNOWN.source,
            "scope": SHARD_NAME_UNKNOWN.scope.value,
            "rationale": SHARD_NAME_UNKNOWN.rationale,
        },
    )


def _same_version(pin: str, column: str) -> bool:
    return pin.removeprefix("v") == column.removeprefix("v")
