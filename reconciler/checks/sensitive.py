"""Security-sensitive changes named at review time (KAI-S-001, docs/policies.md#security-sensitive-changes).

In the PR check, every field of a KAI values file, an NVCA operator values file, or a kai-config or
SchedulingShard kept in Git that decides what runs or how (model/sensitive.py) is compared with the base ref's
value when there is a base, else with the pinned chart's default: a field that changed is one finding at its own
line and column, naming the field and before → after. An image repository or tag equal to the pinned chart's
own is not a change of what runs.

Written in Python, not Rego: the walk needs each key's line and column, the base ref's files and the pinned
chart's defaults and render.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from reconciler.core.jsonvalue import JSONValue
from reconciler.core.redact import redact
from reconciler.core.refs import ObjectRef, YamlPath, format_path
from reconciler.core.resources import CONFIG, SCHEDULING_SHARD
from reconciler.core.show import show_value
from reconciler.findings.builtin_rules import SENSITIVE_CHANGE
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.desired import DesiredCluster, KaiManifest
from reconciler.model.kai_config import PLACEHOLDER_REGISTRY, RELEASED_REGISTRY, ValueSource, render_kai_config
from reconciler.model.sensitive import IMAGE, is_tag, same_tag, sensitive_prefix
from reconciler.model.values import chart_defaults, deep_merge
from reconciler.yamlio.document import YamlDoc

UNSET = object()  # a field the base or the chart does not set
Default = Callable[[YamlPath], JSONValue]

# The NVCA operator chart's defaults of its sensitive values (nvca-operator values.yaml, chart 3.0.4:
# deploy/helm/nvca-operator/nvca-operator/values.yaml, tests/fixtures/nvcf/nvca-operator-chart-values.yaml).
NVCA_DEFAULTS: dict[YamlPath, JSONValue] = {
    ("image", "repository"): "",
    ("image", "tag"): "3.0.4",
    ("nvcaImage", "repositoryOverride"): "",
    ("otelCollector", "imageRepository"): "",
    ("otelCollector", "imageTag"): "0.157.9",
    ("serviceAccount",): {"create": True, "annotations": {}, "name": ""},
    ("agent", "byooOtelCollector", "imageRepository"): "",
    ("agent", "byooOtelCollector", "imageTag"): "0.157.0-nv-0.1.1",
    ("agent", "functionEnvOverrides"): {},
    ("agent", "taskEnvOverrides"): {},
    ("helmManaged", "imageCredHelper", "imageRepository"): "",
    ("helmManaged", "imageCredHelper", "imageTag"): "0.10.2",
    ("helmManaged", "otelCollector", "imageRepository"): "",
    ("helmManaged", "otelCollector", "imageTag"): "0.157.9",
    ("selfManaged", "imageCredHelper", "imageRepository"): "",
    ("selfManaged", "imageCredHelper", "imageTag"): "0.10.2",
    ("selfManaged", "otelCollector", "imageRepository"): "",
    ("selfManaged", "otelCollector", "imageTag"): "0.157.9",
    ("selfManaged", "sharedStorage", "imageTag"): "1.0.5",
    ("clusterValidator", "image", "repository"): "",
    ("clusterValidator", "image", "tag"): "",
}


def sensitive_findings(desired: DesiredCluster, base: DesiredCluster | None) -> list[Finding]:
    """KAI-S-001 for each sensitive field Git changes: against `base` (the PR's base ref), or without one
    against the pinned chart's defaults."""
    check = _Check(desired, base)
    if desired.kai_values_doc is not None:
        check.values_doc(desired.kai_values_doc, "KAI", _value_at(chart_defaults(desired.defaults_version)), kai=True)
    if "nvca_values" in desired.docs:
        check.values_doc("nvca_values", "NVCA", NVCA_DEFAULTS.get, kai=False)
    for manifest in desired.kai_manifests:
        check.manifest(manifest)
    return check.findings


class _Check:
    def __init__(self, desired: DesiredCluster, base: DesiredCluster | None) -> None:
        self.desired, self.base = desired, base
        self.findings: list[Finding] = []
        config = desired.config
        self.pin = (
            config.kai_chart_version
            if desired.kai_values_doc is not None or "env" not in desired.docs
            else config.stack_kai_version
        )

    def values_doc(self, doc_id: str, product: str, default: Default, *, kai: bool) -> None:
        doc = self.desired.docs[doc_id]
        base_doc = self.base.docs.get(doc_id) if self.base is not None else None
        for path in _sensitive_paths(doc, ()):
            before = _at(base_doc, path) if base_doc is not None else _or_unset(default(path))
            self._judge(doc, path, before, f"{product} value", None, base_doc is not None, kai=kai)
        for path in _removed(base_doc, doc, ()):
            self._judge(doc, path, base_doc.get(path) if base_doc else None, f"{product} value", None, True, kai=kai)

    def manifest(self, manifest: KaiManifest) -> None:
        doc = self.desired.docs[manifest.doc]
        ref = (CONFIG if manifest.kind == CONFIG.kind else SCHEDULING_SHARD).ref(manifest.name)
        base_doc = self._base_manifest(manifest)
        default = self._rendered_config() if manifest.kind == CONFIG.kind else {}
        what = f"{manifest.kind} {manifest.name}"
        for path in _sensitive_paths(doc, ("spec",)):
            before = _at(base_doc, path) if base_doc is not None else _at_value(default, path[1:])
            self._judge(doc, path, before, what, ref, base_doc is not None, kai=True)
        for path in _removed(base_doc, doc, ("spec",)):
            self._judge(doc, path, base_doc.get(path) if base_doc else None, what, ref, True, kai=True)

    def _judge(
        self,
        doc: YamlDoc,
        path: YamlPath,
        before: object,
        what: str,
        ref: ObjectRef | None,
        from_base: bool,
        *,
        kai: bool,
    ) -> None:
        after = doc.get(path) if path in doc.positions else UNSET
        if before is not UNSET and after is not UNSET and _same(after, before, exact=from_base):
            return
        _, category = sensitive_prefix(path)
        if category == IMAGE and kai and after is not UNSET and self._pins_own(path, _json(after)):
            return
        was = "unset" if before is UNSET else _show(before)
        now = "unset" if after is UNSET else _show(after)
        against = "the base ref" if from_base else "the pinned chart's default"
        self.findings.append(
            SENSITIVE_CHANGE.finding(
                Kind.VIOLATION,
                f"{what} {format_path(path)} ({category}): {was} → {now} (against {against})",
                self.desired.name,
                subject=ref,
                location=doc.locate(path),
                fix=Fix(
                    Action.NONE,
                    "have the change reviewed; self-heal writes it only where the cluster's "
                    "allowSensitiveWrites names it",
                ),
                extra={
                    "field": format_path(path),
                    "category": str(category),
                    "before": None if before is UNSET else redact(_json(before)),
                    "after": None if after is UNSET else redact(_json(after)),
                },
            )
        )

    def _pins_own(self, path: YamlPath, value: JSONValue) -> bool:
        """An image the pinned KAI chart would use anyway: its released registry, or its own version's tag."""
        if is_tag(path):
            return same_tag(value, self.pin)
        return path[-1] in ("registry", "repository") and value in (RELEASED_REGISTRY, PLACEHOLDER_REGISTRY)

    def _base_manifest(self, manifest: KaiManifest) -> YamlDoc | None:
        if self.base is None:
            return None
        same = next((m for m in self.base.kai_manifests if (m.kind, m.name) == (manifest.kind, manifest.name)), None)
        return self.base.docs[same.doc] if same is not None else None

    def _rendered_config(self) -> JSONValue:
        """The kai-config the pinned chart renders from its own defaults: a Config in Git compared with it."""
        version = self.desired.defaults_version
        values = chart_defaults(version)
        config = render_kai_config(version, values, ValueSource("config", {}, ("config", ())), self.pin)
        return config.spec()


def _sensitive_paths(doc: YamlDoc, root: YamlPath) -> Iterator[YamlPath]:
    """The paths the file itself writes under `root` that are the outermost sensitive field of their branch.

    Read off every position, not walked through the data: a file merged over a base loses the keys it sets
    to null, which are changes too. A path through a list (an index in it) names no field, and is passed over
    first: a values file's 50,000 tolerations are 250,000 such paths."""
    depth = len(root)
    for path in doc.positions:
        if len(path) <= depth or int in map(type, path) or path[:depth] != root:
            continue
        prefix, category = sensitive_prefix(path[depth:])
        if category is not None and len(prefix) == len(path) - depth:
            yield path


def _removed(base_doc: YamlDoc | None, doc: YamlDoc, root: YamlPath) -> Iterator[YamlPath]:
    """The sensitive fields the base sets and the head no longer does (a removed securityContext is a change)."""
    if base_doc is not None:
        yield from (path for path in _sensitive_paths(base_doc, root) if path not in doc.positions)


def _value_at(values: JSONValue) -> Default:
    def default(path: YamlPath) -> JSONValue:
        found = _at_value(values, path)
        return None if found is UNSET else _json(found)

    return default


def _at(doc: YamlDoc, path: YamlPath) -> object:
    return UNSET if path not in doc.positions else doc.get(path)


def _at_value(data: JSONValue, path: YamlPath) -> object:
    for part in path:
        if not isinstance(data, dict) or str(part) not in data:
            return UNSET
        data = data[str(part)]
    return data


def _or_unset(value: JSONValue) -> object:
    return UNSET if value is None else value


def _same(got: object, before: object, *, exact: bool) -> bool:
    """Whether `got` leaves `before` as it is: against the base, the same value; against a chart default, a map
    may also repeat some of its keys (Helm merges the values over the defaults)."""
    if isinstance(got, bool) or isinstance(before, bool):
        return got is before
    if isinstance(got, dict) and isinstance(before, dict):
        if exact:
            return got.keys() == before.keys() and all(_same(got[k], before[k], exact=True) for k in got)
        return deep_merge(before, got) == before
    if isinstance(got, list) and isinstance(before, list):
        return len(got) == len(before) and all(_same(a, b, exact=True) for a, b in zip(got, before, strict=True))
    if isinstance(got, int | float) and isinstance(before, int | float):
        return float(got) == float(before)
    return bool(got == before) or (got in ({}, [], "", None) and before in ({}, [], "", None))


def _json(value: object) -> JSONValue:
    assert value is None or isinstance(value, str | int | float | bool | list | dict)
    return value


def _show(value: object) -> str:
    shown = redact(_json(value))
    if isinstance(shown, bool) or shown is None or isinstance(shown, dict | list):
        return json.dumps(shown, separators=(",", ":"))
    return show_value(shown, quote_strings=True) if shown == "" else show_value(shown)
