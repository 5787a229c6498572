"""Every key of a KAI values file or an add-on environment file, accounted for (KAI-V-010, KAI-V-011), and
the keys and values a KAI release renamed, removed, deprecated or restricted (KAI-V-015 to KAI-V-017).

Written in Python, not Rego: the walk needs each key's own line and column (the facts carry values, not
positions), the key tables of the pinned chart version (model/chart_keys.py) and an edit distance for
"did you mean"; a respelling is a Git edit that `--fix-git` applies.
"""

from __future__ import annotations

from reconciler.core.jsonvalue import JSONValue
from reconciler.core.refs import YamlPath, format_path
from reconciler.findings.builtin_rules import (
    VALUE_DEPRECATED,
    VALUE_IGNORED,
    VALUE_NOT_ALLOWED,
    VALUE_RENAMED,
    VALUE_UNKNOWN,
)
from reconciler.findings.finding import Action, EditOp, Finding, Fix, GitEdit, Kind
from reconciler.findings.rules import RuleMeta
from reconciler.model.chart_keys import (
    ADDON_SOURCE,
    ANY_VERSION,
    KeyTree,
    chart_keys,
    ignored_value,
    stack_keys,
    versions_knowing,
    with_keys_of,
)
from reconciler.model.desired import DesiredCluster
from reconciler.model.key_history import (
    AllowedValues,
    Change,
    KeyChange,
    Subchart,
    added_after_model,
    added_later,
    allowed_values,
    change_at,
    subchart,
)
from reconciler.model.values import chart_defaults, deep_merge
from reconciler.yamlio.document import YamlDoc

MAX_SUGGESTIONS = 3
ADDON_KAI: YamlPath = ("addons", "kaiScheduler")


def values_key_findings(desired: DesiredCluster) -> list[Finding]:
    """Unknown and ignored keys of the cluster's standalone values file or add-on environment file."""
    walks: list[_Walk] = []
    if desired.kai_values_doc is not None:
        walks.append(_ValuesWalk(desired, desired.docs[desired.kai_values_doc], chart_keys(desired.defaults_version)))
    if "env" in desired.docs:
        known = stack_keys() if desired.stack_base is None else with_keys_of(stack_keys(), desired.stack_base)
        walks.append(_EnvWalk(desired, desired.docs["env"], known))
    findings: list[Finding] = []
    for walk in walks:
        walk.mapping(walk.doc.mapping(), ())
        findings += walk.findings
    return findings


class _Walk:
    """Visits the keys the file itself writes (an env doc's data has the stack base merged in)."""

    def __init__(self, desired: DesiredCluster, doc: YamlDoc, known: KeyTree) -> None:
        self.desired, self.doc, self.known = desired, doc, known
        self.findings: list[Finding] = []

    def mapping(self, data: dict[str, JSONValue], path: YamlPath) -> None:
        known = _subtree(self.known, path)
        if known is None:
            return
        for key, value in data.items():
            child = (*path, key)
            if child not in self.doc.positions:
                continue
            if self.judge(child, value, known):
                continue
            if isinstance(value, dict) and isinstance(known.get(key), dict):
                self.mapping(value, child)

    def judge(self, path: YamlPath, value: JSONValue, siblings: KeyTree) -> bool:
        """Report the key if it is wrong; True when its inside need not be walked."""
        raise NotImplementedError

    def unknown(self, path: YamlPath, siblings: KeyTree, why: str) -> None:
        hint, edits = self.respelling(path, siblings)
        remedy = f"rename it to {edits[0].value}" if edits else "delete it or correct its spelling"
        self.findings.append(
            VALUE_UNKNOWN.finding(
                # not `KEY: why`: free-text redaction reads `global.password: KAI …` as a secret pair and masks "KAI"
                Kind.VIOLATION,
                f"unknown key {format_path(path)} — {why}{hint}",
                self.desired.name,
                location=self.doc.locate(path),
                fix=Fix(Action.NONE, remedy, git_edits=edits),
                extra=_extra(VALUE_UNKNOWN),
            )
        )

    def ignored(self, path: YamlPath, message: str, remedy: str, siblings: KeyTree | None = None) -> None:
        hint, edits = self.respelling(path, siblings) if siblings is not None else ("", ())
        self.findings.append(
            VALUE_IGNORED.finding(
                Kind.VIOLATION,
                message + hint,
                self.desired.name,
                location=self.doc.locate(path),
                fix=Fix(Action.NONE, f"rename it to {edits[0].value}" if edits else remedy, git_edits=edits),
                extra=_extra(VALUE_IGNORED),
            )
        )

    def respelling(self, path: YamlPath, siblings: KeyTree) -> tuple[str, tuple[GitEdit, ...]]:
        """ "; did you mean …?" for the known keys close to this one, and the rename when exactly one is."""
        close = suggestions(str(path[-1]), [k for k in siblings if k not in _written_keys(self.doc, path[:-1])])
        if not close:
            return "", ()
        edits = (GitEdit(self.doc.file, path, close[0], EditOp.RENAME),) if len(close) == 1 else ()
        return "; did you mean " + " or ".join(close) + "?", edits


class _ValuesWalk(_Walk):
    def judge(self, path: YamlPath, value: JSONValue, siblings: KeyTree) -> bool:
        pin = self.desired.config.kai_chart_version
        if self.history(path, value, siblings):
            return True
        entry = ignored_value(path, pin)
        if entry is not None:
            default = _value_at(chart_defaults(self.desired.defaults_version), path)
            if not (entry.unless_default and _same(value, default)):
                remedy = f"remove {format_path(path)}" + (
                    ", or pin a chart version that carries it" if entry.ranges != ANY_VERSION else ""
                )
                self.ignored(
                    path,
                    f"{format_path(path)} is ignored by KAI chart {pin}: it never reaches "
                    f"{entry.target} ({entry.source}); {entry.carried_by}",
                    remedy,
                )
            return True
        if path[-1] in siblings or added_after_model(path, pin, self.desired.defaults_version):
            return False
        elsewhere = [v for v in versions_knowing(path) if v != self.desired.defaults_version]
        why = f"KAI chart {pin} has no such value, so Helm ignores it"
        if later := added_later(path, pin):  # the key history names the release and its source
            why += f" (KAI chart {later.version} adds it: {later.source})"
        elif len(elsewhere) == 1:
            why += f" (chart {elsewhere[0]} has it)"
        elif elsewhere:
            more = f" and {len(elsewhere) - 2} more" if len(elsewhere) > 3 else ""
            shown = elsewhere[:2] if more else elsewhere
            why += f" (charts {', '.join(shown)}{more} have it)"
        self.unknown(path, siblings, why)
        return True

    def history(self, path: YamlPath, value: JSONValue, siblings: KeyTree) -> bool:
        """A key the pinned release renamed, removed or deprecated, a value it does not act on, or a subchart's
        values (model/key_history.py); True when the key is judged."""
        pin = self.desired.config.kai_chart_version
        change = change_at(path, pin)
        if change is not None:
            self.changed(path, value, change)
            return True
        allowed = allowed_values(path, pin)
        if allowed is not None and not (isinstance(value, str) and value in allowed.values):
            self.not_allowed(path, value, allowed)
            return True
        chart = subchart(str(path[0])) if len(path) == 1 and path[-1] not in siblings else None
        if chart is not None:
            self.subchart_values(path, chart)
            return True
        return False

    def changed(self, path: YamlPath, value: JSONValue, change: KeyChange) -> None:
        pin = self.desired.config.kai_chart_version
        new = format_path(change.new_path) if change.new_path else ""
        edits = self.renaming(path, value, change)
        note = f"; {change.note}" if change.note else ""
        if change.change is Change.DEPRECATED:
            message = (
                f"{format_path(path)} is deprecated since KAI chart {change.version} in favour of {new} "
                f"({change.source}); chart {pin} still honours it{note}"
            )
            rule, remedy = VALUE_DEPRECATED, f"rename it to {new}"
        else:
            verb = f"renamed to {new}" if change.change is Change.RENAMED else "removed"
            message = (
                f"{format_path(path)} was {verb} by KAI chart {change.version} ({change.source}), so chart "
                f"{pin} ignores it{note}"
            )
            rule = VALUE_RENAMED
            remedy = f"rename it to {new}" if change.new_path else f"delete {format_path(path)}"
        if change.new_path and _written(self.doc, change.new_path):
            remedy = f"delete {format_path(path)}: {new} is set too and wins"
        self.findings.append(
            rule.finding(
                Kind.VIOLATION,
                message,
                self.desired.name,
                location=self.doc.locate(path),
                fix=Fix(Action.NONE, remedy, git_edits=edits),
                extra=_extra(rule),
            )
        )

    def renaming(self, path: YamlPath, value: JSONValue, change: KeyChange) -> tuple[GitEdit, ...]:
        """The rename `--fix-git` may make: same meaning, same parent, the new key not already written."""
        new = change.new_path
        if not change.same_meaning or new is None or new[:-1] != tuple(path[:-1]) or _written(self.doc, new):
            return ()
        edits = [GitEdit(self.doc.file, path, new[-1], EditOp.RENAME)]
        converted = change.new_value(value)
        if converted is not value:
            edits.append(GitEdit(self.doc.file, new, converted))
        return tuple(edits)

    def not_allowed(self, path: YamlPath, value: JSONValue, allowed: AllowedValues) -> None:
        pin = self.desired.config.kai_chart_version
        shown = (
            f"the boolean {str(value).lower()} (YAML reads an unquoted on/off/yes/no as a boolean)"
            if isinstance(value, bool)
            else repr(value)
        )
        later = [f"{v!r} comes with {where}" for v, where in allowed.upcoming if v == value]
        message = (
            f"{format_path(path)} is {shown}: KAI chart {pin} acts only on "
            f"{' or '.join(repr(v) for v in allowed.values)} ({allowed.source})" + (f"; {later[0]}" if later else "")
        )
        edits: tuple[GitEdit, ...] = ()
        if isinstance(value, bool) and {"on", "off"} <= set(allowed.values):
            edits = (GitEdit(self.doc.file, path, "on" if value else "off"),)
        self.findings.append(
            VALUE_NOT_ALLOWED.finding(
                Kind.VIOLATION,
                message,
                self.desired.name,
                location=self.doc.locate(path),
                fix=Fix(
                    Action.NONE, f"write one of {', '.join(repr(v) for v in allowed.values)}, quoted", git_edits=edits
                ),
                extra=_extra(VALUE_NOT_ALLOWED),
            )
        )

    def subchart_values(self, path: YamlPath, chart: Subchart) -> None:
        pin = self.desired.config.kai_chart_version
        gate = format_path(chart.gate)
        if not chart.in_chart(pin):
            self.findings.append(
                VALUE_UNKNOWN.finding(
                    Kind.VIOLATION,
                    f"unknown key {format_path(path)} — the values of the {chart.key} subchart, which "
                    f"KAI chart {pin} does not have ({chart.source}), so Helm ignores them",
                    self.desired.name,
                    location=self.doc.locate(path),
                    fix=Fix(Action.NONE, f"delete it, or pin a chart version with the {chart.key} subchart"),
                    extra=_extra(VALUE_UNKNOWN),
                )
            )
        elif self.doc.get(chart.gate) is not True:
            self.ignored(
                path,
                f"{format_path(path)} is ignored by KAI chart {pin}: the {chart.key} subchart is "
                f"rendered only when {gate} is true ({chart.source})",
                f"set {gate}: true, or delete {format_path(path)}",
            )


class _EnvWalk(_Walk):
    def judge(self, path: YamlPath, value: JSONValue, siblings: KeyTree) -> bool:
        inside_kai = path[:2] == ADDON_KAI and len(path) > 2
        if path[-1] in siblings:
            return False
        if inside_kai:
            self.ignored(
                path,
                f"{format_path(path)} is ignored by the compute-plane stack: of "
                "addons.kaiScheduler it reads only enabled and <component>.resources."
                f"{{requests,limits}}.{{cpu,memory}} ({ADDON_SOURCE})",
                "remove it; KAI values other than these are not configurable in add-on mode",
                siblings,
            )
            return True
        self.unknown(path, siblings, "the compute-plane stack reads no such environment key, so it is ignored")
        return True


def suggestions(key: str, candidates: list[str]) -> list[str]:
    """The candidates within a small edit distance of `key`, closest first (at most three). Short keys get
    less room: `gpu` is not a misspelt `cpu`."""
    limit = 0 if len(key) <= 3 else 1 if len(key) <= 8 else 2
    scored = sorted((distance(key.lower(), c.lower()), c) for c in candidates if c != key)
    return [c for d, c in scored if d <= limit][:MAX_SUGGESTIONS]


def distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, previous2[j - 2] + 1)
            current.append(best)
        previous2, previous = previous, current
    return previous[-1]


def _subtree(tree: KeyTree, path: YamlPath) -> KeyTree | None:
    node: KeyTree | None = tree
    for part in path:
        if node is None:
            return None
        node = node.get(str(part))
    return node


def _written_keys(doc: YamlDoc, parent: YamlPath) -> set[str]:
    value = doc.get(parent)
    return {k for k in value if (*parent, k) in doc.positions} if isinstance(value, dict) else set()


def _written(doc: YamlDoc, path: YamlPath) -> bool:
    return tuple(path) in doc.positions


def _value_at(data: JSONValue, path: YamlPath) -> JSONValue:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[str(part)]
    return data


def _same(got: JSONValue, default: JSONValue) -> bool:
    """Whether writing `got` leaves the chart default as it is (a map may repeat some default keys)."""
    if isinstance(got, bool) or isinstance(default, bool):
        return got is default
    if isinstance(got, dict) and isinstance(default, dict):
        return deep_merge(default, got) == default
    return bool(got == default) or (got in ({}, [], "") and default is None)


def _extra(rule: RuleMeta) -> dict[str, str]:
    return {"source": rule.source, "scope": rule.scope.value, "rationale": rule.rationale}
