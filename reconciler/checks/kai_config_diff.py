"""Desired vs live `kai-config` (KAI-D-005, KAI-D-006) and the SchedulingShards Git does not declare
(KAI-D-007) (docs/policies.md#kai-config).

One finding per object, naming every differing field by its dotted spec path, located at the Git line of
the first field's value.
"""

from __future__ import annotations

import json
import shlex

from reconciler.core.jsonvalue import JSONObject, JSONValue
from reconciler.core.redact import redact, redact_at
from reconciler.core.refs import Location
from reconciler.core.resources import CONFIG, SCHEDULING_SHARD
from reconciler.core.show import show_value
from reconciler.findings.builtin_rules import CONFIG_DRIFT, CONFIG_MISSING, SHARD_UNDECLARED
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.chart_keys import era_of
from reconciler.model.desired import DesiredCluster
from reconciler.model.kai_config import CONFIG_NAME, DesiredKaiConfig, leaves
from reconciler.model.live import KaiObject, LiveState

ConfigChange = tuple[str, JSONValue, JSONValue, Location | None]  # dotted path, live, desired, where in Git
SHOWN_CHANGES = 6


def diff_kai_config(desired: DesiredCluster, live: LiveState, helm_command: str) -> list[Finding]:
    if not desired.installs_kai:
        return []
    findings: list[Finding] = []
    if live.kai_config is not None and desired.kai_config is not None:
        findings.extend(_config_drift(desired, desired.kai_config, live.kai_config, masked=live.from_snapshot))
    elif live.kai_config is None and live.kai_config_read:
        findings.extend(_config_missing(desired, live, helm_command))
    findings.extend(_undeclared_shards(desired, live))
    return findings


def config_changes(
    desired: DesiredCluster, config: DesiredKaiConfig, spec: JSONObject, *, masked: bool = False
) -> list[ConfigChange]:
    """Every field whose live value differs from Git's; a live field Git leaves out differs when it is
    not what the operator would default it to (A field whose default we do not model is left alone).
    `masked`: the spec was read from a snapshot file, whose credentials are redacted: such a field is the same
    when Git's value, redacted where it stands, is what the file shows."""
    changes: list[ConfigChange] = []
    for field in config.fields.values():
        have = _at(spec, field.path)
        if masked and have != field.value and redact_at(field.path.split("."), field.value) == have:
            continue
        if normalise_numbers(have) != normalise_numbers(field.value):
            changes.append((field.path, have, field.value, desired.locate(field.doc, field.source)))
    for path, have in leaves(spec).items():
        if _covered(path, config):
            continue
        default = config.operator_default(path)
        if default is not None and normalise_numbers(have) != normalise_numbers(default):
            changes.append((path, have, None, None))  # removed, the operator's default applies
    return changes


def config_patch(changes: list[ConfigChange]) -> JSONObject:
    """The merge patch that sets every changed field to Git's value (null removes a field Git leaves out)."""
    spec: JSONObject = {}
    for path, _, want, _ in changes:
        *parents, last = path.split(".")
        node = spec
        for part in parents:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[last] = want
    return {"spec": spec}


def _config_drift(desired: DesiredCluster, config: DesiredKaiConfig, live: KaiObject, *, masked: bool) -> list[Finding]:
    changes = config_changes(desired, config, live.spec, masked=masked)
    if not changes:
        return []
    shown = ", ".join(
        f"{path} {_show(redact(have))} → {_shown_want(want)}" for path, have, want, _ in changes[:SHOWN_CHANGES]
    )
    more = f" and {len(changes) - SHOWN_CHANGES} more" if len(changes) > SHOWN_CHANGES else ""
    patch = config_patch(changes)
    location = next((where for *_, where in changes if where is not None), None)
    location = location or desired.locate("config", ("clusters", desired.config.index, "kaiChartVersion"))
    return [
        CONFIG_DRIFT.finding(
            Kind.DRIFT,
            f"kai-config differs from Git: {shown}{more}",
            desired.name,
            subject=CONFIG.ref(CONFIG_NAME),
            location=location,
            desired=redact({path: want for path, _, want, _ in changes}),
            live=redact({path: have for path, have, _, _ in changes}),
            changes=tuple(_field_change(config, path, have, want, where) for path, have, want, where in changes),
            fix=_patch_fix(
                patch,
                f"kubectl patch configs.kai.scheduler {CONFIG_NAME} --type merge -p "
                f"{shlex.quote(json.dumps(redact(patch), separators=(',', ':')))}",
            ),
        )
    ]


def _field_change(
    config: DesiredKaiConfig, path: str, have: JSONValue, want: JSONValue, where: Location | None
) -> DriftedField:
    in_object = ("spec", *path.split("."))  # kai-config's paths are its spec's keys, none holds a dot
    return DriftedField(
        in_object,
        redact_at(in_object, have),
        redact_at(in_object, want),
        path,
        str(where) if where else None,
        config.provenance(path).origin.value,
    )


def _patch_fix(patch: JSONObject, command: str) -> Fix:
    """Patched by the plan, unless a value looks like a credential: plans and outputs carry the patch as it
    is, so that one is left to the operator (the command shows it redacted)."""
    if redact(patch) != patch:
        return Fix(
            Action.NONE, "patch kai-config's spec to Git's values (a value looks like a credential)", command=command
        )
    return Fix(Action.UPDATE, "patch kai-config's spec to Git's values", command=command, patch=patch)


def _shown_want(want: JSONValue) -> str:
    return "(operator default)" if want is None else _show(redact(want))


def _show(value: JSONValue) -> str:
    """As the value is written in YAML: true/false, null, a mapping or list as compact JSON."""
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return show_value(value)


def _config_missing(desired: DesiredCluster, live: LiveState, helm_command: str) -> list[Finding]:
    if desired.kai_config_elsewhere or not any(r.status == "deployed" for r in live.releases):
        return []
    config = desired.kai_config
    era = era_of(desired.config.kai_chart_version)
    if config is not None and config.managed_in_git:
        manifest = next(m for m in desired.kai_manifests if m.kind == CONFIG.kind and m.name == CONFIG_NAME)
        where = desired.locate(manifest.doc, ())
        command = f"kubectl apply -f {where.file if where else 'the kai-config manifest'}"
        why = "Git keeps it in kaiManifestFiles"
    else:
        where = desired.locate("config", ("clusters", desired.config.index, "kaiChartVersion"))
        command = helm_command
        why = (
            "the chart's post-install hook did not run or failed (Argo CD syncs without hooks: KAI-Scheduler #1751)"
            if era in ("E2", "E3")
            else "it was deleted"
        )
    return [
        CONFIG_MISSING.finding(
            Kind.DRIFT,
            f"kai-config does not exist while the KAI release is deployed: {why}; the operator "
            "deploys nothing without it",
            desired.name,
            subject=CONFIG.ref(CONFIG_NAME),
            location=where,
            desired=redact(config.spec()) if config else None,
            fix=Fix(Action.NONE, "re-create kai-config (the operator re-creates what it owns)", command=command),
        )
    ]


def _undeclared_shards(desired: DesiredCluster, live: LiveState) -> list[Finding]:
    declared = {m.name for m in desired.kai_manifests if m.kind == SCHEDULING_SHARD.kind}
    declared.add("default")  # the chart's own, compared by KAI-D-003
    findings = []
    for name in sorted(set(live.shards) - declared):
        findings.append(
            SHARD_UNDECLARED.finding(
                Kind.DRIFT,
                f"SchedulingShard {name} exists but Git does not declare it; it is reported, never deleted",
                desired.name,
                subject=SCHEDULING_SHARD.ref(name),
                location=desired.locate("config", ("clusters", desired.config.index, "name")),
                live=redact(live.shards[name].spec),
                fix=Fix(
                    Action.NONE,
                    "declare it in the cluster's kaiManifestFiles, or delete it if nobody uses it",
                    command=f"kubectl get schedulingshards.kai.scheduler {name} -o yaml",
                ),
            )
        )
    return findings


def _covered(path: str, config: DesiredKaiConfig) -> bool:
    """A live field Git sets, or one inside / around a field Git sets as a whole."""
    return any(path == p or path.startswith(f"{p}.") or p.startswith(f"{path}.") for p in config.fields)


def _at(spec: JSONValue, dotted: str) -> JSONValue:
    for part in dotted.split("."):
        if not isinstance(spec, dict):
            return None
        spec = spec.get(part)
    return spec


def normalise_numbers(value: JSONValue) -> JSONValue:
    """Numbers compare as floats (Helm decodes them as float64); everything else as is."""
    if isinstance(value, dict):
        return {str(k): normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value
