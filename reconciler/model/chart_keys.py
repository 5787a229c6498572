"""Which KAI values keys a chart version reads, which it silently drops, and how it produces `kai-config`.

Read from the KAI chart (github.com/kai-scheduler/KAI-Scheduler, `deployments/kai-scheduler`) at each tag:
`values.yaml` (the bundled `data/chart-values/<tag>.yaml`, keys and the keys its comments document),
`templates/kai-config.yaml` (until v0.12.21) or the `kai-scheduler.kai-config` template of
`templates/_helpers.tpl` (from v0.12.22), `templates/default-shard.yaml`. Versions are looked up in tables,
never compared as "newer is better": v0.12.23 renders kai-config like v0.14.7, v0.13.4 like v0.12.13.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from reconciler.core.jsonvalue import JSONValue
from reconciler.core.refs import YamlPath
from reconciler.model.values import chart_defaults, parse_version, shipped_chart_versions

Version = tuple[int, int, int]
VersionRange = tuple[Version, Version]  # inclusive
# A key tree: a mapping is walked key by key; None marks a value whose inside is not checked (a scalar, a
# list, or a free-form map such as `resources`).
KeyTree = dict[str, "KeyTree | None"]

ANY_VERSION: tuple[VersionRange, ...] = (((0, 0, 0), (0, 99, 99)),)

# Maps whose keys are Kubernetes fields or user names, not chart values: never walked.
FREE_FORM = frozenset(
    {
        "resources",
        "affinity",
        "nodeSelector",
        "tolerations",
        "daemonsetsTolerations",
        "labels",
        "annotations",
        "namespaceLabels",
        "securityContext",
        "podSecurityContext",
        "namespaceLabelSelector",
        "podLabelSelector",
        "resourceReservationPodResources",
        "plugins",
        "actions",
        "args",
        "scenarioSearchBudgets",
        "updatePolicy",
        "resourcePolicy",
        "networkPolicy",
        "network",
    }
)

COMPONENTS = (
    "podgrouper",
    "podgroupcontroller",
    "queuecontroller",
    "admission",
    "binder",
    "scheduler",
    "nodescaleadjuster",
)


# -- eras: how a chart version produces kai-config ------------------------------------------------------


@dataclass(frozen=True)
class Era:
    name: str  # E1 (pre-install/pre-upgrade hook), E2 (post-install deployer Job), E3 (v0.17.x)
    ranges: tuple[VersionRange, ...]


# Every tag checked (templates/kai-config.yaml, templates/hooks/post/kai-config-deployer/ at each tag); v0.16.9
# and v0.17.1 from the release branches v0.16 and v0.17, whose templates differ from v0.16.8/v0.17.0 only in
# the image-tag helper (reconciler/data/README.md).
ERAS = (
    Era("E1", (((0, 9, 0), (0, 12, 21)), ((0, 13, 0), (0, 13, 4)), ((0, 14, 0), (0, 14, 5)), ((0, 15, 0), (0, 15, 2)))),
    Era(
        "E2", (((0, 12, 22), (0, 12, 23)), ((0, 14, 6), (0, 14, 7)), ((0, 15, 3), (0, 15, 3)), ((0, 16, 0), (0, 16, 9)))
    ),
    Era("E3", (((0, 17, 0), (0, 17, 1)),)),
)


def era_of(pin: str) -> str | None:
    """E1, E2 or E3 for a released chart version; None for a version no era table row holds (newer than
    the table, before v0.9.0 when there was no kai-config, or the retracted v0.20.x tags)."""
    version = parse_version(pin)
    if version is None:
        return None
    return next((era.name for era in ERAS if _within(version, era.ranges)), None)


def _within(version: Version, ranges: tuple[VersionRange, ...]) -> bool:
    return any(low <= version <= high for low, high in ranges)


# -- values a chart version silently drops -----------------------------------------------------------------


@dataclass(frozen=True)
class IgnoredValue:
    """A values key that the chart versions in `ranges` accept and then drop: it never reaches its object."""

    path: YamlPath
    ranges: tuple[VersionRange, ...]
    carried_by: str  # which versions carry it, or what to set instead
    source: str  # the upstream issue or template that shows it
    unless_default: bool = False  # setting it to the chart default changes nothing: not reported
    target: str = "kai-config"


_BEFORE_0_13: tuple[VersionRange, ...] = (((0, 9, 0), (0, 12, 99)),)
_V09: tuple[VersionRange, ...] = (((0, 9, 0), (0, 9, 99)),)


def _ignored_values() -> tuple[IgnoredValue, ...]:
    entries = [
        IgnoredValue(
            ("global", "queueLabelKey"),
            ANY_VERSION,
            "no chart version has it; set podgrouper.queueLabelKey (carried from v0.16.0)",
            "KAI-Scheduler #1655",
        ),
        IgnoredValue(
            ("podgrouper", "queueLabelKey"),
            (((0, 9, 0), (0, 15, 99)),),
            "carried from v0.16.0 (v0.14.6/v0.15.1 change logs list the fix, their templates do not)",
            "KAI-Scheduler #1655",
            unless_default=True,
        ),
        IgnoredValue(
            ("global", "nodePoolLabelKey"), (((0, 9, 0), (0, 16, 2)),), "carried from v0.16.3", "KAI-Scheduler #1774"
        ),
        IgnoredValue(
            ("global", "nodeSelector"), _BEFORE_0_13, "carried from v0.13.0", "KAI-Scheduler #1101", unless_default=True
        ),
        IgnoredValue(
            ("global", "imagePullSecrets"),
            (((0, 10, 0), (0, 10, 99)), ((0, 12, 0), (0, 12, 18)), ((0, 13, 0), (0, 13, 99)), ((0, 14, 0), (0, 14, 0))),
            "carried by v0.12.19+, v0.14.1+ and later (the CRD of this version prunes the field)",
            "KAI-Scheduler #942",
            unless_default=True,
        ),
        *[
            IgnoredValue(
                ("global", "resourceReservation", key),
                _BEFORE_0_13,
                "carried from v0.13.0",
                "KAI-Scheduler #890",
                unless_default=True,
            )
            for key in ("namespace", "serviceAccount", "appLabel")
        ],
        *[
            IgnoredValue(
                ("podgrouper", key), _BEFORE_0_13, "carried from v0.13.0", "KAI-Scheduler #859", unless_default=True
            )
            for key in ("image", "resources", "affinity")
        ],
        *[
            IgnoredValue(
                ("binder", "resourceReservationImage", key),
                (((0, 10, 0), (0, 12, 99)),),
                "carried from v0.13.0 (earlier charts carry only the image name)",
                "KAI-Scheduler chart templates/kai-config.yaml",
                unless_default=True,
            )
            for key in ("tag", "pullPolicy")
        ],
        *[
            IgnoredValue(
                (comp, "resources"),
                _V09,
                "carried from v0.10.0 (v0.9.x indents the block wrongly)",
                "KAI-Scheduler chart v0.9.20 templates/kai-config.yaml",
            )
            for comp in ("podgroupcontroller", "queuecontroller", "admission", "nodescaleadjuster")
        ],
        IgnoredValue(
            ("global", "tag"),
            _V09,
            "carried from v0.10.0 (v0.9.x always uses the chart version)",
            "KAI-Scheduler chart v0.9.20 templates/kai-config.yaml",
            unless_default=True,
        ),
        *[
            IgnoredValue(
                (comp, "image", "tag"),
                _V09,
                "carried from v0.10.0 (v0.9.x always uses the chart version)",
                "KAI-Scheduler chart v0.9.20 templates/kai-config.yaml",
            )
            for comp in COMPONENTS
        ],
        *[
            IgnoredValue(
                (comp, "enabled"),
                (((0, 9, 0), (0, 14, 99)),),
                "carried by v0.15.3 and later (earlier charts hard-code every component on)",
                "KAI-Scheduler chart templates/kai-config.yaml",
                unless_default=True,
            )
            for comp in ("binder", "podgrouper", "podgroupcontroller", "queuecontroller", "admission", "scheduler")
        ],
        *[
            IgnoredValue(
                (comp, "replicas"),
                ANY_VERSION,
                "no chart version has it; operator.replicaCount sets every component's replicas",
                "KAI-Scheduler #1124",
            )
            for comp in (*COMPONENTS, "numaPlacementExporter")
        ],
        *[
            IgnoredValue(
                ("scheduler", key),
                (((0, 9, 0), (0, 12, 13)),),
                "rendered into the SchedulingShard from v0.12.14; this chart's shard keeps nodeplacement "
                "cpu=gpu=placementStrategy with preempt and consolidation on",
                "KAI-Scheduler chart templates/default-shard.yaml",
                target="SchedulingShard default",
            )
            for key in ("plugins", "actions")
        ],
    ]
    return tuple(entries)


IGNORED_VALUES = _ignored_values()


def ignored_value(path: YamlPath, pin: str) -> IgnoredValue | None:
    """The entry saying the pinned chart drops the value at `path`, if any."""
    version = parse_version(pin)
    if version is None:
        return None
    for entry in IGNORED_VALUES:
        if entry.path == tuple(path) and _within(version, entry.ranges):
            return entry
    return None


# -- keys a chart version reads -----------------------------------------------------------------------------

# Keys the templates read that values.yaml neither sets nor documents in a comment, from the version on
# (the kai-config template and templates/services/* of the KAI chart).
_TEMPLATE_ONLY_KEYS: tuple[tuple[YamlPath, Version], ...] = (
    *[((comp, "resources"), (0, 9, 0)) for comp in COMPONENTS],
    *[((comp, "image", "tag"), (0, 9, 0)) for comp in (*COMPONENTS, "operator")],
    *[((comp, "replicas"), (0, 0, 0)) for comp in (*COMPONENTS, "numaPlacementExporter")],
    (("operator", "resources"), (0, 9, 0)),
    (("global", "queueLabelKey"), (0, 0, 0)),
    (("global", "nodePoolLabelKey"), (0, 9, 0)),
    (("binder", "runtimeClassName"), (0, 10, 0)),
    (("binder", "resourceReservationPodResources"), (0, 10, 0)),
    (("binder", "resourceReservationImage", "tag"), (0, 10, 0)),
    (("binder", "cdiEnabled"), (0, 12, 0)),
    (("global", "daemonsetsTolerations"), (0, 16, 0)),
    (("scheduler", "goMemLimit"), (0, 17, 0)),
)


@functools.cache
def chart_keys(version: str) -> KeyTree:
    """The values keys chart `version` (a shipped chart-values file) reads."""
    tree = _tree(chart_defaults(version))
    for path in _commented_keys(_chart_text(version)):
        _add(tree, path)
    number = parse_version(version) or (0, 0, 0)
    for path, since in _TEMPLATE_ONLY_KEYS:
        if number >= since:
            _add(tree, path)
    return tree


def versions_knowing(path: YamlPath) -> list[str]:
    """The shipped chart versions whose values have `path`."""
    return [v for v in shipped_chart_versions() if has_key(chart_keys(v), path)]


@functools.cache
def stack_keys() -> KeyTree:
    """The environment keys the nvcf-compute-plane stack reads: its environments/base.yaml plus what its
    templates read that base.yaml leaves out (github.com/NVIDIA/nvcf fadc0f81, deploy/stacks/nvcf-compute-plane
    helmfile.d/01-dependencies.yaml.gotmpl and 02-nvca.yaml.gotmpl)."""
    text = resources.files("reconciler").joinpath("data/stack/base.yaml").read_text()
    from reconciler.yamlio.document import load_document

    tree = _tree(load_document(text, "stack/base.yaml", shared=True).data)
    for path in _commented_keys(text):
        _add(tree, path)
    for path in STACK_TEMPLATE_KEYS:
        _add(tree, path)
    addons = tree.setdefault("addons", {})
    assert isinstance(addons, dict)  # base.yaml's addons is a mapping of add-ons
    addons["kaiScheduler"] = addon_kai_keys()
    return tree


STACK_TEMPLATE_KEYS: tuple[YamlPath, ...] = (
    ("agentConfig", "mergeConfig"),
    ("networkPolicy",),
    ("global", "nodeSelector", "key"),
    ("global", "nodeSelector", "value"),
    ("global", "nvcaOperator", "selfManaged", "otelCollector", "enabled"),
    ("global", "nvcaOperator", "selfManaged", "otelCollector", "imageRepository"),
    ("global", "nvcaOperator", "selfManaged", "imageCredHelper", "imageTag"),
    ("global", "nvcaOperator", "selfManaged", "sharedStorage", "imageTag"),
    ("global", "nvcaOperator", "agent", "tolerations"),
    ("global", "nvcaOperator", "agent", "workload", "tolerations"),
)

# The KAI add-on reads only `enabled` and per-component requests/limits of cpu and memory
# (helmfile.d/01-dependencies.yaml.gotmpl); any other key under addons.kaiScheduler is dropped.
ADDON_KAI_COMPONENTS = (
    "operator",
    "podgrouper",
    "podgroupcontroller",
    "binder",
    "scheduler",
    "queuecontroller",
    "admission",
    "nodescaleadjuster",
    "numaPlacementExporter",
)
ADDON_SOURCE = "nvcf-compute-plane helmfile.d/01-dependencies.yaml.gotmpl (github.com/NVIDIA/nvcf)"


def with_keys_of(tree: KeyTree, data: JSONValue) -> KeyTree:
    """`tree` plus the keys of `data` (a vendored stack base.yaml may be newer than the bundled one)."""
    return _merged(tree, _tree(data))


def _merged(tree: KeyTree, more: KeyTree) -> KeyTree:
    out: KeyTree = dict(tree)
    for key, child in more.items():
        mine = out.get(key)
        if isinstance(mine, dict) and isinstance(child, dict):
            out[key] = _merged(mine, child)
        elif key not in out:
            out[key] = child
    return out


def addon_kai_keys() -> KeyTree:
    numbers: KeyTree = {"cpu": None, "memory": None}
    per_component: KeyTree = {"resources": {"requests": dict(numbers), "limits": dict(numbers)}}
    tree: KeyTree = {"enabled": None}
    for comp in ADDON_KAI_COMPONENTS:
        tree[comp] = per_component
    return tree


def _tree(data: JSONValue) -> KeyTree:
    tree: KeyTree = {}
    if not isinstance(data, dict):
        return tree
    for key, value in data.items():
        walk = isinstance(value, dict) and value and key not in FREE_FORM
        tree[key] = _tree(value) if walk else None
    return tree


def _add(tree: KeyTree, path: YamlPath) -> None:
    node = tree
    for i, part in enumerate(path):
        key = str(part)
        last = i == len(path) - 1
        if last:
            node.setdefault(key, None)
            return
        child = node.get(key)
        if child is None:
            if key in node:  # a scalar or free-form value: its inside is not checked anyway
                return
            child = node[key] = {}
        node = child


def has_key(tree: KeyTree, path: YamlPath) -> bool:
    node: KeyTree | None = tree
    for part in path:
        if node is None:
            return True  # inside a value that is not walked
        if str(part) not in node:
            return False
        node = node[str(part)]
    return True


@functools.cache
def _chart_text(version: str) -> str:
    return resources.files("reconciler").joinpath(f"data/chart-values/{version}.yaml").read_text()


_KEY_LINE = re.compile(r"^( *)([A-Za-z0-9_.-]+):(?:\s|$)")
# `    # tag: ""  # Optional: Override global.tag`: a key the chart documents but leaves unset.
_COMMENTED_KEY = re.compile(r"^( *)# ([a-z][A-Za-z0-9]*):(?:\s|$)")


def _commented_keys(text: str) -> list[YamlPath]:
    """Keys a values file documents in a comment at the indentation of real keys (the prose and examples of
    comments are indented further or capitalised, and are not keys)."""
    found: list[YamlPath] = []
    stack: list[tuple[int, str]] = []
    sibling_indents: set[tuple[tuple[str, ...], int]] = set()
    pending: list[tuple[tuple[str, ...], int, str]] = []
    for line in text.splitlines():
        real = _KEY_LINE.match(line)
        if real:
            indent = len(real[1])
            while stack and stack[-1][0] >= indent:
                stack.pop()
            sibling_indents.add((tuple(k for _, k in stack), indent))
            stack.append((indent, real[2]))
            continue
        commented = _COMMENTED_KEY.match(line)
        if commented:
            indent = len(commented[1])
            parents = tuple(k for i, k in stack if i < indent)
            pending.append((parents, indent, commented[2]))
    for parents, indent, key in pending:
        if (parents, indent) in sibling_indents:
            found.append((*parents, key))
    return found
