"""The history of KAI's values keys: which release added, renamed, removed or deprecated each, and the values
some keys allow, each with its upstream source.

Two halves. What the shipped chart-values files show (a key present in one version and absent from the
next) is computed from them (`computed_changes`); what they cannot show is kept by hand below: that a key
was renamed rather than dropped, whether its meaning stayed, the commit or PR, and facts from the release
branches and change fragments that no shipped file holds yet. tests/checks/test_key_history.py recomputes every
removal between adjacent shipped files and checks that this table explains it.

Sources: github.com/kai-scheduler/KAI-Scheduler, `deployments/kai-scheduler/values.yaml` and
`templates/_helpers.tpl` at each tag and on the `v0.16` / `v0.17` release branches (heads 2026-08-07);
`Chart.yaml` and `.changes/unreleased/*.yaml` on `main` after that for what no release carries yet.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from reconciler.core.jsonvalue import JSONValue
from reconciler.core.refs import YamlPath
from reconciler.model.chart_keys import KeyTree, chart_keys
from reconciler.model.values import parse_version, shipped_chart_versions

# A change that no released chart carries yet (main, or a change fragment): never applied to a pin.
UNRELEASED = "unreleased"


class Change(StrEnum):
    ADDED = "added"
    REMOVED = "removed"  # dropped with no replacement: Helm ignores it from `version` on
    RENAMED = "renamed"  # dropped, `new_path` reads it instead; the old key is ignored from `version` on
    DEPRECATED = "deprecated"  # `new_path` is the new spelling; the old one is still honoured


@dataclass(frozen=True)
class KeyChange:
    path: YamlPath
    change: Change
    version: str  # the first release with the change, or UNRELEASED
    source: str  # commit / PR / file upstream
    new_path: YamlPath | None = None
    same_meaning: bool = False  # the rename keeps the meaning: `--fix-git` may respell the key
    value_map: tuple[tuple[JSONValue, JSONValue], ...] = ()  # old value -> new value, when the rename needs one
    note: str = ""

    def applies_to(self, pin: str) -> bool:
        """Whether a chart pinned at `pin` has this change (an unreleased change applies to no pin)."""
        since, wanted = parse_version(self.version), parse_version(pin)
        return since is not None and wanted is not None and wanted >= since

    def new_value(self, old: JSONValue) -> JSONValue:
        """What `old` becomes under the new key (the same value unless the rename maps values)."""
        for before, after in self.value_map:
            if isinstance(before, bool) == isinstance(old, bool) and before == old:
                return after
        return old


FIPS = ("global", "fips")
FIPS_MODE = ("global", "fipsMode")
GPU_POD_RUNTIME = ("admission", "gpuPodRuntimeClassName")
GPU_FRACTION_RUNTIME = ("admission", "gpuFractionRuntimeClassName")

KEY_CHANGES: tuple[KeyChange, ...] = (
    KeyChange(
        ("binder", "cdi"),
        Change.REMOVED,
        "v0.10.0",
        "KAI-Scheduler c59f2e2e (#495, operator deploys the binder): values.yaml of v0.10.0 drops binder.cdi",
        note="the binder reads binder.cdiEnabled from v0.12.0 (a template-only key); admission.cdi stays",
    ),
    KeyChange(
        ("kaiConfigDeployer",),
        Change.ADDED,
        "v0.12.22",
        "KAI-Scheduler df61a32b (#1706, backport of the kai-config upgrade fix to v0.12) and d7af38c2 "
        "(#1705, to v0.14.6)",
        note="a backport to the v0.12 and v0.14 lines: no v0.13.x chart has the deployer",
    ),
    KeyChange(
        GPU_POD_RUNTIME,
        Change.DEPRECATED,
        "v0.16.0",
        "KAI-Scheduler 71c61d07 (#1636; CHANGELOG v0.16.0, entry linking #1543); templates/_helpers.tpl "
        'still reads it when gpuFractionRuntimeClassName is not set; Config CRD: "Deprecated: use '
        'GPUFractionRuntimeClassName"',
        new_path=GPU_FRACTION_RUNTIME,
        same_meaning=True,
        note="from v0.16.0 both keys mean the runtime class of GPU-fraction pods only (whole-GPU pods are no "
        "longer mutated); the new key wins when both are set",
    ),
    *[
        KeyChange(
            (component, "certSecretName"),
            Change.REMOVED,
            "v0.17.0",
            'KAI-Scheduler da0dbee4 (#1791, "Remove unused queuecontroller.certSecretName and '
            'admission.certSecretName in values.yaml")',
            note="no template read it before either: the webhook certificates are the operator's",
        )
        for component in ("admission", "queuecontroller")
    ],
    KeyChange(FIPS_MODE, Change.ADDED, "v0.17.1", "KAI-Scheduler fd7bfe99 (#2011, on the v0.17 branch)"),
    KeyChange(
        FIPS,
        Change.RENAMED,
        "v0.17.1",
        'KAI-Scheduler fd7bfe99 (#2011, "rename global.fips to global.fipsMode with on/off values", on the '
        "v0.17 branch; the v0.16 branch keeps global.fips): _helpers.tpl tests only "
        'eq .Values.global.fipsMode "on"',
        new_path=FIPS_MODE,
        same_meaning=True,
        value_map=((True, "on"), (False, "off")),
        note="no fallback: global.fips: true silently installs the non-FIPS images",
    ),
)


@dataclass(frozen=True)
class AllowedValues:
    """The values a key's template acts on; any other value is silently the default."""

    path: YamlPath
    values: tuple[str, ...]
    since: str  # first release with the key
    source: str
    upcoming: tuple[tuple[str, str], ...] = ()  # (value, where it comes from) not in any release yet


ALLOWED_VALUES: tuple[AllowedValues, ...] = (
    AllowedValues(
        FIPS_MODE,
        ("off", "on"),
        "v0.17.1",
        'KAI-Scheduler fd7bfe99 (#2011): values.yaml "Valid values: \\"on\\" | \\"off\\""; '
        '_helpers.tpl acts only on "on"',
        upcoming=(
            (
                "only",
                "KAI-Scheduler main after v0.17.1, .changes/unreleased/"
                "added-20260825-220648.yaml: sets GODEBUG=fips140=only",
            ),
        ),
    ),
)


@dataclass(frozen=True)
class Subchart:
    """A chart dependency: its values live under `key` and Helm renders it only while `gate` is true."""

    key: str
    gate: YamlPath
    since: str  # first release with the dependency, or UNRELEASED
    source: str

    def in_chart(self, pin: str) -> bool:
        since, wanted = parse_version(self.since), parse_version(pin)
        return since is not None and wanted is not None and wanted >= since


SUBCHARTS: tuple[Subchart, ...] = (
    Subchart(
        "gpu-fractioning",
        ("global", "nvFractions", "set"),
        UNRELEASED,
        "KAI-Scheduler main after v0.17.1: deployments/kai-scheduler/Chart.yaml dependencies (gpu-fractioning "
        "from oci://ghcr.io/kai-scheduler, condition: global.nvFractions.set; #2280, #2290)",
    ),
)


@dataclass(frozen=True)
class UpcomingValue:
    """A value that a change on KAI main, in no release yet, makes stale: said in an upgrade plan, never a finding."""

    paths: tuple[YamlPath, ...]
    value: JSONValue
    text: str
    source: str


UPCOMING_VALUES: tuple[UpcomingValue, ...] = (
    UpcomingValue(
        tuple(
            (hook, "image", "name") for hook in ("crdupgrader", "kaiConfigDeployer", "topologyMigration", "postCleanup")
        ),
        "crd-upgrader",
        "the hook image crd-upgrader is replaced by helm-hooks (Go on distroless, no shell "
        "or kubectl): an override naming crd-upgrader becomes stale",
        "KAI-Scheduler main, .changes/unreleased/changed-20260916-171806.yaml (c3390bc4)",
    ),
)


@dataclass(frozen=True)
class ComputedChange:
    """A key present in one shipped chart-values file and absent from the next (or the reverse)."""

    path: YamlPath
    change: Change  # ADDED or REMOVED
    before: str
    after: str


def key_changes(path: YamlPath) -> list[KeyChange]:
    return [entry for entry in KEY_CHANGES if entry.path == tuple(path)]


def change_at(path: YamlPath, pin: str) -> KeyChange | None:
    """The rename, removal or deprecation a chart pinned at `pin` has for the key at `path`."""
    for entry in key_changes(path):
        if entry.change is not Change.ADDED and entry.applies_to(pin):
            return entry
    return None


def added_after_model(path: YamlPath, pin: str, modelled: str) -> KeyChange | None:
    """The hand entry adding `path` in a release newer than `modelled`, the shipped chart-values file a pin
    falls back to (a pin ahead of the shipped files knows the keys its release added)."""
    for entry in key_changes(path):
        if entry.change is Change.ADDED and entry.applies_to(pin) and not entry.applies_to(modelled):
            return entry
    return None


def added_later(path: YamlPath, pin: str) -> KeyChange | None:
    """The hand entry adding `path` in a release after `pin`, when no shipped file has it yet."""
    return next(
        (
            e
            for e in key_changes(path)
            if e.change is Change.ADDED and not e.applies_to(pin) and parse_version(e.version) is not None
        ),
        None,
    )


def changes_between(old: str, new: str) -> list[KeyChange]:
    """The hand-kept renames, removals and deprecations a move from pin `old` to pin `new` crosses."""
    return [
        entry
        for entry in KEY_CHANGES
        if entry.change is not Change.ADDED and entry.applies_to(new) and not entry.applies_to(old)
    ]


def allowed_values(path: YamlPath, pin: str) -> AllowedValues | None:
    wanted = parse_version(pin)
    for entry in ALLOWED_VALUES:
        since = parse_version(entry.since)
        if entry.path == tuple(path) and wanted is not None and since is not None and wanted >= since:
            return entry
    return None


def subchart(key: str) -> Subchart | None:
    return next((s for s in SUBCHARTS if s.key == key), None)


def leaf_paths(tree: KeyTree, prefix: YamlPath = ()) -> Iterator[YamlPath]:
    """Every key of a key tree that has no walked keys under it."""
    for key, child in tree.items():
        if isinstance(child, dict) and child:
            yield from leaf_paths(child, (*prefix, key))
        else:
            yield (*prefix, key)


@functools.cache
def computed_changes() -> tuple[ComputedChange, ...]:
    """Keys added and removed between each pair of adjacent shipped chart-values files."""
    versions = shipped_chart_versions()
    found: list[ComputedChange] = []
    for before, after in itertools.pairwise(versions):
        old, new = set(leaf_paths(chart_keys(before))), set(leaf_paths(chart_keys(after)))
        found += [ComputedChange(p, Change.REMOVED, before, after) for p in sorted(old - new)]
        found += [ComputedChange(p, Change.ADDED, before, after) for p in sorted(new - old)]
    return tuple(found)


def explain_removal(removal: ComputedChange) -> KeyChange | None:
    """The hand entry behind a removal between two adjacent shipped files: a removal or rename released in
    between, or a backport that gave the older line a key the next minor line never had."""
    before, after = parse_version(removal.before), parse_version(removal.after)
    assert before is not None and after is not None  # shipped files are named by their tags
    for depth in range(len(removal.path), 0, -1):
        for entry in key_changes(removal.path[:depth]):
            since = parse_version(entry.version)
            if since is None:
                continue
            if entry.change in (Change.REMOVED, Change.RENAMED, Change.DEPRECATED) and before < since <= after:
                return entry
            if entry.change is Change.ADDED and since[:2] == before[:2] and after[:2] != before[:2]:
                return entry
    return None
