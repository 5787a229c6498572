"""What upgrading one cluster's KAI chart from its pin to a target version changes, for *its* values.

Built from the models, never from a cluster: the key history (model/key_history.py) for keys the target
renames, removes or deprecates and values it does not act on; the shipped chart-values files of both versions
for keys that disappear and defaults that change; the kai-config mapping of both chart columns
(model/kai_config.py) for the Config fields the new version adds or drops; the CRD field changes
(model/crd_history.py); the default shard plugins and actions per version (model/shard_plugins.py,
`shard_defaults`); and the install-only default queues. Every item names its upstream source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum

from reconciler.core.jsonvalue import JSONObject, JSONValue
from reconciler.core.redact import redact_at, redact_free_text
from reconciler.core.refs import Location, YamlPath, format_path
from reconciler.core.show import show_value
from reconciler.findings.builtin_rules import PIN_CHANGE
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.chart_keys import KeyTree, chart_keys, has_key
from reconciler.model.crd_history import crd_changes_between
from reconciler.model.crd_schemas import crd_version_for
from reconciler.model.desired import DesiredCluster
from reconciler.model.kai_config import COLUMNS, column_fields
from reconciler.model.key_history import (
    UPCOMING_VALUES,
    Change,
    allowed_values,
    change_at,
    changes_between,
)
from reconciler.model.shard_plugins import ShardNames, shard_names
from reconciler.model.values import chart_defaults, defaults_version_for, parse_version, shipped_chart_versions

CHART_VALUES_SOURCE = "KAI-Scheduler deployments/kai-scheduler/values.yaml at {old} and {new}"
CONFIG_SOURCE = (
    "KAI-Scheduler kai-config template (templates/_helpers.tpl or templates/kai-config.yaml) at {old} "
    "and {new}, as modelled in kai-gitops"
)
CRD_HOOK_SOURCE = "KAI-Scheduler templates/hooks/pre/crd-upgrader.yaml (helm.sh/hook: pre-install,pre-upgrade)"
DEFAULT_QUEUES_SOURCE = (
    "KAI-Scheduler templates/default-queue.yaml (rendered only when .Release.IsInstall, helm.sh/resource-policy: keep)"
)


class Section(StrEnum):
    KEYS = "keys"  # the cluster's own values the target renames, removes or reinterprets
    DEFAULTS = "defaults"  # chart defaults the cluster relies on that change
    CONFIG = "config"  # kai-config fields the target adds or drops
    SHARD = "shard"  # default shard plugins and actions
    CRDS = "crds"  # CRD field changes
    UPCOMING = "upcoming"  # changes on KAI main in no release yet that touch these values
    REMINDERS = "reminders"  # what no chart upgrade does


@dataclass(frozen=True)
class PlanItem:
    section: Section
    subject: str  # a values key, a Config field, a CRD field
    text: str
    source: str
    must_change: bool = False  # Git has to change before the upgrade
    location: Location | None = None
    kind: str = ""  # added, removed, changed, moved: how renderers group the defaults

    def redacted(self) -> PlanItem:
        return replace(self, subject=redact_free_text(self.subject), text=redact_free_text(self.text))

    def to_dict(self) -> dict[str, JSONValue]:
        where: JSONValue = None
        if self.location is not None:
            where = {"file": self.location.file, "line": self.location.line, "column": self.location.column}
        return {
            "section": self.section.value,
            "subject": self.subject,
            "kind": self.kind,
            "text": self.text,
            "source": self.source,
            "mustChange": self.must_change,
            "location": where,
        }


@dataclass(frozen=True)
class PlanStep:
    text: str
    source: str

    def to_dict(self) -> dict[str, JSONValue]:
        return {"text": self.text, "source": self.source}


@dataclass(frozen=True)
class UpgradePlan:
    cluster: str
    mode: str
    current: str  # the pin in kai-gitops.yaml
    target: str
    current_model: str  # the shipped chart-values file each version is read from
    target_model: str
    items: tuple[PlanItem, ...] = ()
    steps: tuple[PlanStep, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def changes_needed(self) -> bool:
        return any(item.must_change for item in self.items)

    def section(self, section: Section) -> list[PlanItem]:
        return [item for item in self.items if item.section is section]

    def redacted(self) -> UpgradePlan:
        """The plan as every view renders it: its free text (values quoted from the values file among it) judged
        once more by the free-text redaction, as a report's findings are."""
        return replace(
            self,
            items=tuple(item.redacted() for item in self.items),
            steps=tuple(replace(step, text=redact_free_text(step.text)) for step in self.steps),
            notes=tuple(map(redact_free_text, self.notes)),
        )

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "cluster": self.cluster,
            "mode": self.mode,
            "from": self.current,
            "to": self.target,
            "fromModel": self.current_model,
            "toModel": self.target_model,
            "changesNeeded": self.changes_needed,
            "items": [item.to_dict() for item in self.items],
            "steps": [step.to_dict() for step in self.steps],
            "notes": list(self.notes),
        }


class NoPlan(ValueError):
    """No plan can be built from the pin to the target; the message says why, in one line."""


class UnknownTarget(NoPlan):
    """The target is not a modelled chart version; the message names the ones that are."""


class NotAnUpgrade(NoPlan):
    """The target is older than the pin, or the pin newer than every modelled release: a downgrade, which the
    plan's steps (the target's CRDs applied over newer stored objects, defaults read forwards) would get wrong."""


def target_versions() -> tuple[str, ...]:
    """The versions a plan can go to: the shipped chart-values files (a release added there appears here)."""
    return shipped_chart_versions()


# -- in the PR check: a pin that changes ---------------------------------------------------------------------


def pin_change_findings(desired: DesiredCluster, base: DesiredCluster | None) -> list[Finding]:
    """KAI-V-018 at the new kaiChartVersion when the pull request moves it: what the plan holds, in counts, and
    the command that prints it. The keys Git must change are findings of their own (KAI-V-015 to KAI-V-017)."""
    if base is None or _same_release(base.config.kai_chart_version, desired.config.kai_chart_version):
        return []
    old, new = base.config.kai_chart_version, desired.config.kai_chart_version
    command = f"kai-gitops upgrade-plan --cluster {desired.name} --to {new} -o markdown"
    where = desired.locate("config", ("clusters", desired.config.index, "kaiChartVersion"))
    if is_downgrade(old, new):
        return [
            PIN_CHANGE.finding(
                Kind.VIOLATION,
                f"KAI chart {old} → {new} for {desired.name} is a downgrade, which `kai-gitops "
                f"upgrade-plan` does not plan: the chart's crd-upgrader hook would apply {new}'s CRDs over "
                f"objects stored by {old}",
                desired.name,
                location=where,
                fix=Fix(Action.NONE, f"keep {old}, or downgrade by hand after checking {new}'s CRDs and values"),
                extra={"source": PIN_CHANGE.source, "scope": PIN_CHANGE.scope.value, "rationale": PIN_CHANGE.rationale},
            )
        ]
    if new in target_versions():
        plan = build_upgrade_plan(replace(desired, config=replace(desired.config, kai_chart_version=old)), new)
        counts = {section: len(plan.section(section)) for section in Section}
        summary = (
            f"{counts[Section.KEYS]} key(s) of the values to look at, {counts[Section.DEFAULTS]} default(s), "
            f"{counts[Section.CONFIG]} kai-config field(s) and {counts[Section.CRDS]} CRD change(s) move with "
            "it, and the live default queues stay as installed"
        )
    else:
        summary = f"{new} is not a modelled chart version (modelled: {', '.join(target_versions())}), so no plan"
    return [
        PIN_CHANGE.finding(
            Kind.VIOLATION,
            f"KAI chart {old} → {new} for {desired.name}: {summary}; "
            f"`{command}` prints the plan with its sources and steps",
            desired.name,
            location=where,
            fix=Fix(Action.NONE, f"run `{command}` and follow its steps in order"),
            extra={"source": PIN_CHANGE.source, "scope": PIN_CHANGE.scope.value, "rationale": PIN_CHANGE.rationale},
        )
    ]


# -- shard defaults: the default plugins and actions of each version -------------------------------------------

ShardDefaults = ShardNames


def shard_defaults(version: str) -> ShardDefaults | None:
    """The default SchedulingShard plugins and actions of chart `version` (model/shard_plugins.py, from the KAI
    source of each release), or None for a version whose shard has no defaults (before v0.12): the plan says so."""
    return shard_names(version)


SHARD_SOURCE = (
    "KAI-Scheduler pkg/apis/kai/v1/schedulingshard_types.go (defaultPluginPriorities, "
    "defaultActionPriorities) and pkg/scheduler/plugins/factory.go (built-in plugins) at {old} and {new}"
)


# -- building the plan ------------------------------------------------------------------------------------------


def build_upgrade_plan(
    desired: DesiredCluster, target: str, shard_model: Callable[[str], ShardDefaults | None] = shard_defaults
) -> UpgradePlan:
    if target not in target_versions():
        raise UnknownTarget(f"KAI chart {target} is not modelled (modelled: {', '.join(target_versions())})")
    current = desired.config.kai_chart_version
    _refuse_a_downgrade(desired.name, current, target)
    old_model, new_model = defaults_version_for(current), target
    plan = UpgradePlan(desired.name, str(desired.config.mode), current, target, old_model, new_model)
    if _same_release(current, target):
        return plan
    items = [
        *_key_items(desired, current, target, old_model, new_model),
        *_default_items(desired.kai_values_user, current, target, (old_model, new_model)),
        *_config_items(old_model, new_model),
        *_shard_items(old_model, new_model, shard_model),
        *_crd_items(crd_version_for(current), crd_version_for(target)),
        *_upcoming_items(desired),
        _default_queues_reminder(),
    ]
    notes = []
    if old_model != current:
        notes.append(f"{current} is read as {old_model}, the nearest chart version kai-gitops models")
    if not any(item.section is Section.SHARD for item in items) and None not in (
        shard_model(old_model),
        shard_model(new_model),
    ):
        notes.append(f"the default shard plugins and actions of {old_model} and {new_model} are the same")
    if shard_model(old_model) is None or shard_model(new_model) is None:
        notes.append(
            f"{old_model if shard_model(old_model) is None else new_model} has no modelled default shard "
            "plugins and actions (KAI has them from v0.12): compare them in the SchedulingShard after the "
            "upgrade"
        )
    return UpgradePlan(
        plan.cluster,
        plan.mode,
        current,
        target,
        old_model,
        new_model,
        tuple(items),
        _steps(items, desired),
        tuple(notes),
    )


def _refuse_a_downgrade(cluster: str, current: str, target: str) -> None:
    pin, wanted = parse_version(current), parse_version(target)
    newest = target_versions()[-1]
    if pin is None or wanted is None or wanted >= pin:
        return
    if pin > (parse_version(newest) or pin):
        raise NotAnUpgrade(
            f"the pin {current} of {cluster} is newer than every KAI chart kai-gitops models "
            f"(newest {newest}), so it is not modelled and no plan starts from it"
        )
    raise NotAnUpgrade(
        f"KAI chart {target} is older than the pin {current} of {cluster}: a downgrade, which "
        "upgrade-plan does not plan (the target's CRDs would go over newer stored objects); choose a "
        "target at or after the pin"
    )


def is_downgrade(current: str, target: str) -> bool:
    pin, wanted = parse_version(current), parse_version(target)
    return pin is not None and wanted is not None and wanted < pin


def _same_release(current: str, target: str) -> bool:
    return parse_version(current) == parse_version(target)


def _written_paths(desired: DesiredCluster) -> Iterator[tuple[YamlPath, JSONValue, Location]]:
    """Each key the standalone values file writes (not list items), with its value and where it is."""
    if desired.kai_values_doc is None:
        return
    doc = desired.docs[desired.kai_values_doc]
    for path in doc.positions:
        if path and all(isinstance(part, str) for part in path):
            yield path, doc.get(path), doc.locate(path)


def _key_items(
    desired: DesiredCluster, current: str, target: str, old_model: str, new_model: str
) -> Iterator[PlanItem]:
    reported: list[YamlPath] = []
    old_keys, new_keys = chart_keys(old_model), chart_keys(new_model)
    for path, value, where in _written_paths(desired):
        if any(path[: len(done)] == done for done in reported):
            continue
        item = _key_item(path, value, where, current, target, (old_keys, new_keys, old_model, new_model))
        if item is not None:
            reported.append(path)
            yield item


def _key_item(
    path: YamlPath,
    value: JSONValue,
    where: Location,
    current: str,
    target: str,
    models: tuple[KeyTree, KeyTree, str, str],
) -> PlanItem | None:
    old_keys, new_keys, old_model, new_model = models
    key = format_path(path)
    change = change_at(path, target)
    if change is not None and change_at(path, current) is None:
        new = format_path(change.new_path) if change.new_path else ""
        if change.change is Change.DEPRECATED:
            text = f"deprecated from {change.version} in favour of {new}; still honoured" + (
                f" ({change.note})" if change.note else ""
            )
            return PlanItem(Section.KEYS, key, text + f": rename it to {new}", change.source, True, where)
        verb = f"renamed to {new}" if change.change is Change.RENAMED else "removed"
        todo = (
            f"write {new}: {_show_at(change.new_path, change.new_value(value))} instead"
            if change.new_path
            else "delete it"
        )
        return PlanItem(
            Section.KEYS,
            key,
            f"{verb} in {change.version}, so {target} ignores it; {todo}"
            + (f" ({change.note})" if change.note else ""),
            change.source,
            True,
            where,
        )
    allowed = allowed_values(path, target)
    if allowed is not None and not (isinstance(value, str) and value in allowed.values):
        return PlanItem(
            Section.KEYS,
            key,
            f"{_show_at(path, value)} is not acted on by {target}: "
            f"write one of {', '.join(repr(v) for v in allowed.values)}",
            allowed.source,
            True,
            where,
        )
    source = CHART_VALUES_SOURCE.format(old=old_model, new=new_model)
    if has_key(old_keys, path) and not has_key(new_keys, path):
        return PlanItem(
            Section.KEYS,
            key,
            f"a value of {old_model}, not of {new_model}: Helm ignores it after the "
            "upgrade; delete it or move it to the key that replaced it",
            source,
            True,
            where,
        )
    if not has_key(old_keys, path) and has_key(new_keys, path):
        return PlanItem(
            Section.KEYS,
            key,
            f"ignored by {old_model}, read by {new_model}: it takes effect with the upgrade",
            source,
            False,
            where,
        )
    return None


def _default_items(user: JSONObject, current: str, target: str, models: tuple[str, str]) -> Iterator[PlanItem]:
    """Defaults that change for values the cluster does not set (a value it sets keeps its own); a default that
    moved to a renamed key says what the rename did to its meaning."""
    old_model, new_model = models
    old, new = dict(_leaves(chart_defaults(old_model))), dict(_leaves(chart_defaults(new_model)))
    source = CHART_VALUES_SOURCE.format(old=old_model, new=new_model)
    renamed = {entry.path: entry for entry in changes_between(current, target) if entry.new_path}
    for path in [*old, *(p for p in new if p not in old)]:
        if _sets(user, path) or old.get(path) == new.get(path):
            continue
        if path in renamed:
            entry = renamed[path]
            moved = format_path(entry.new_path) if entry.new_path else ""
            note = f": {entry.note}" if entry.note else ""
            yield PlanItem(
                Section.DEFAULTS,
                format_path(path),
                f"default {_show(old[path])} now under {moved} ({entry.change.value} in {entry.version}){note}",
                entry.source,
                kind="moved",
            )
        elif path not in new:
            yield PlanItem(
                Section.DEFAULTS,
                format_path(path),
                f"no longer a value (default was {_show(old[path])})",
                source,
                kind="removed",
            )
        elif path not in old:
            yield PlanItem(
                Section.DEFAULTS, format_path(path), f"new, default {_show(new[path])}", source, kind="added"
            )
        else:
            yield PlanItem(
                Section.DEFAULTS,
                format_path(path),
                f"default {_show(old[path])} → {_show(new[path])}",
                source,
                kind="changed",
            )


def _config_items(old_model: str, new_model: str) -> Iterator[PlanItem]:
    """Fields new to kai-config, a block that is new as a whole shown once."""
    if old_model not in COLUMNS or new_model not in COLUMNS:
        return
    old, new = column_fields(old_model), column_fields(new_model)
    source = CONFIG_SOURCE.format(old=old_model, new=new_model)
    for change, fields, other in (("added", new - old, old), ("removed", old - new, new)):
        shown: set[str] = set()
        for path in sorted(fields):
            block = path.split(".")[0]
            whole = not any(f.split(".")[0] == block for f in other)
            subject = f"spec.{block}" if whole else f"spec.{path}"
            if subject in shown:
                continue
            shown.add(subject)
            text = (
                "rendered into kai-config from the target on"
                if change == "added"
                else "no longer rendered into kai-config"
            )
            yield PlanItem(Section.CONFIG, subject, text + (" (the whole block)" if whole else ""), source, kind=change)


def _shard_items(
    old_model: str, new_model: str, shard_model: Callable[[str], ShardDefaults | None]
) -> Iterator[PlanItem]:
    """What the operator merges a shard's own plugins and actions over: a default that comes or goes, a default
    priority that changes, a plugin built in (off unless a shard names it) that comes or goes."""
    old, new = shard_model(old_model), shard_model(new_model)
    if old is None or new is None:
        return
    source = SHARD_SOURCE.format(old=old.source, new=new.source)
    for kind, before, after in (("plugin", old.plugins, new.plugins), ("action", old.actions, new.actions)):
        for name in sorted(after.keys() - before.keys()):
            yield PlanItem(
                Section.SHARD,
                name,
                f"new default {kind} (priority {after[name]}): the default shard runs it from the target on",
                source,
                kind="added",
            )
        for name in sorted(before.keys() - after.keys()):
            yield PlanItem(
                Section.SHARD, name, f"no longer a default {kind} (priority was {before[name]})", source, kind="removed"
            )
        for name in sorted(n for n in before.keys() & after.keys() if before[n] != after[n]):
            yield PlanItem(
                Section.SHARD, name, f"default {kind} priority {before[name]} → {after[name]}", source, kind="changed"
            )
    gained, lost = (
        set(new.optional_plugins) - set(old.optional_plugins),
        set(old.optional_plugins) - set(new.optional_plugins),
    )
    for name in sorted(gained - old.plugins.keys()):
        yield PlanItem(
            Section.SHARD,
            name,
            "built-in plugin, off unless a shard names it: available from the target on",
            source,
            kind="added",
        )
    for name in sorted(lost - new.plugins.keys()):
        yield PlanItem(
            Section.SHARD,
            name,
            "built-in plugin no longer in the scheduler: a shard that names it gets an unknown plugin",
            source,
            kind="removed",
        )


def _crd_items(current: str, target: str) -> Iterator[PlanItem]:
    """`current` and `target` as the CRD models read them (crd_version_for: a v0.16.7 pin serves v0.16.8's CRDs,
    whatever chart-values file stands for its values)."""
    for change in crd_changes_between(current, target):
        yield PlanItem(Section.CRDS, f"{change.crd} {change.field}", f"{change.what} ({change.when})", change.source)


def _upcoming_items(desired: DesiredCluster) -> Iterator[PlanItem]:
    for path, value, where in _written_paths(desired):
        for upcoming in UPCOMING_VALUES:
            if path in upcoming.paths and value == upcoming.value:
                yield PlanItem(
                    Section.UPCOMING,
                    format_path(path),
                    upcoming.text + " (in no release yet)",
                    upcoming.source,
                    False,
                    where,
                )


def _default_queues_reminder() -> PlanItem:
    return PlanItem(
        Section.REMINDERS,
        "default queues",
        "the chart creates the default queues only on helm install and keeps them: this upgrade does not "
        "change the live default queues, whatever the values say; compare them with `kai-gitops diff` "
        "and patch them (`kai-gitops reconcile --apply`)",
        DEFAULT_QUEUES_SOURCE,
    )


def _steps(items: list[PlanItem], desired: DesiredCluster) -> tuple[PlanStep, ...]:
    git = [item for item in items if item.must_change]
    steps = []
    if git:
        steps.append(
            PlanStep(
                "In Git first, in the pull request that changes the pin: "
                + "; ".join(f"{item.subject} ({item.text.split('; ')[-1]})" for item in git),
                "the keys above",
            )
        )
    steps += [
        PlanStep(
            f"Change kaiChartVersion of {desired.name} in kai-gitops.yaml to the target and let `kai-gitops "
            "check` judge the pull request against the target's keys",
            "kai-gitops (docs/upgrade-plan.md)",
        ),
        PlanStep(
            "CRDs before the chart: the chart's crd-upgrader hook applies the target's CRDs before the upgrade; "
            "where hooks do not run (helm template | kubectl apply, --no-hooks) apply the target's "
            "deployments/kai-scheduler/crds/ yourself first",
            CRD_HOOK_SOURCE,
        ),
        _upgrade_step(desired),
        PlanStep(
            "Verify: `kai-gitops doctor` and `kai-gitops diff` (kai-config reconciled, operands available, the "
            "default queues as Git says)",
            DEFAULT_QUEUES_SOURCE,
        ),
    ]
    return tuple(steps)


def _upgrade_step(desired: DesiredCluster) -> PlanStep:
    if desired.config.mode == "addon":
        return PlanStep(
            "Upgrade the compute-plane stack to the release that pins the target (in add-on mode the "
            "stack installs KAI and pins its chart; kaiChartVersion follows it)",
            "NVIDIA/nvcf deploy/stacks/nvcf-compute-plane/helmfile.d/01-dependencies.yaml.gotmpl",
        )
    return PlanStep(
        "Upgrade the chart to the target (helm upgrade, or the GitOps controller syncing the new pin)",
        "KAI-Scheduler README.md (helm upgrade -i kai-scheduler oci://ghcr.io/kai-scheduler/kai-scheduler/"
        "kai-scheduler --version <VERSION>)",
    )


def _show(value: JSONValue) -> str:
    return show_value(value, quote_strings=True)


def _show_at(path: YamlPath, value: JSONValue) -> str:
    """A value of the user's values file as the redaction shows it where it stands (a token under any key is
    `<redacted>`), so a plan pasted into a pull request quotes no credential."""
    return _show(redact_at([str(part) for part in path], value))


def _leaves(data: JSONValue, prefix: YamlPath = ()) -> Iterator[tuple[YamlPath, JSONValue]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, (*prefix, key))
    elif prefix:
        yield prefix, data


def _sets(user: JSONObject, path: YamlPath) -> bool:
    node: JSONValue = user
    for part in path:
        if not isinstance(node, dict):
            return True  # the user replaced a map with a value
        if part not in node:
            return False
        node = node[str(part)]
    return True
