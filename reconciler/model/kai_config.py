"""The desired `kai-config` (the KAI operator's Config): what the pinned chart renders from the values, field
by field, each with the Git location of the value that produced it.

Read from the KAI chart (github.com/kai-scheduler/KAI-Scheduler, `deployments/kai-scheduler`) at each
modelled tag: `templates/kai-config.yaml` (E1 charts) or the `kai-scheduler.kai-config` template of
`templates/_helpers.tpl` (E2/E3), the Config CRD of each tag, and the operator's `SetDefaultsWhereNeeded`
for fields the chart leaves out. A chart version is looked up by its modelled column (the shipped
chart-values file it uses), never compared as "newer is better". The add-on stack's forwarding is read from
github.com/NVIDIA/nvcf fadc0f81, `deploy/stacks/nvcf-compute-plane/helmfile.d/01-dependencies.yaml.gotmpl`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

from reconciler.core.jsonvalue import JSONObject, JSONValue, mapping_at
from reconciler.core.refs import YamlPath
from reconciler.model.key_history import KEY_CHANGES, Change
from reconciler.model.provenance import ASSUMED, OPERATOR_DEFAULT, Origin, Provenance
from reconciler.model.values import chart_defaults, copy_values, deep_merge, shipped_chart_versions

CONFIG_NAME = "kai-config"
# Chart columns of the mapping, oldest first: the shipped chart-values files (tools/kai_release.py writes one per
# release). A column added later renders as the newest older column does unless a `since(...)` branch says not.
COLUMNS = shipped_chart_versions()
# The repository's values.yaml holds a placeholder; the released chart carries the real registry.
RELEASED_REGISTRY = "ghcr.io/kai-scheduler/kai-scheduler"
PLACEHOLDER_REGISTRY = "registry/local/kai-scheduler"

# values key -> Config block of each operand
COMPONENTS = (
    ("podgrouper", "podGrouper"),
    ("podgroupcontroller", "podGroupController"),
    ("queuecontroller", "queueController"),
    ("admission", "admission"),
    ("binder", "binder"),
    ("scheduler", "scheduler"),
    ("nodescaleadjuster", "nodeScaleAdjuster"),
)


def since(version: str) -> frozenset[str]:
    return frozenset(COLUMNS[COLUMNS.index(version) :])


ALL = frozenset(COLUMNS)


@dataclass(frozen=True)
class ConfigField:
    """One field of the desired Config spec and where its value comes from."""

    path: str  # dotted under spec, e.g. "admission.gpuSharing"
    value: JSONValue
    doc: str  # doc id holding the value (the chart pin in kai-gitops.yaml for a chart default)
    source: YamlPath  # where in `doc`
    from_values: bool  # False: the chart's default or a constant of its template

    @property
    def provenance(self) -> Provenance:
        """Declared where Git sets the value; else rendered by the pinned chart (its default, or a constant)."""
        return Provenance(Origin.DECLARED if self.from_values else Origin.CHART, self.doc, self.source)


@dataclass(frozen=True)
class DesiredKaiConfig:
    version: str  # the modelled chart column
    fields: dict[str, ConfigField] = field(default_factory=dict)
    managed_in_git: bool = False  # a Config kept in Git (kaiManifestFiles)

    def spec(self) -> JSONObject:
        """The fields as one nested spec, as the chart renders it."""
        spec: JSONObject = {}
        for item in self.fields.values():
            *parents, last = item.path.split(".")
            node = spec
            for part in parents:
                child = node.setdefault(part, {})
                assert isinstance(child, dict)
                node = child
            node[last] = copy_values(item.value)
        return spec

    def operator_default(self, path: str) -> JSONValue | None:
        """What the operator fills in for a field the Config leaves out, or None if we do not model it."""
        return operator_default(path, self.version, self.fields)

    def provenance(self, path: str) -> Provenance:
        """Where Git's value of `path` comes from: a desired field's own, else the operator's in-memory default
        (never a desired field: it informs messages, not writes), else nothing."""
        if path in self.fields:
            return self.fields[path].provenance
        return OPERATOR_DEFAULT if self.operator_default(path) is not None else ASSUMED


# -- operator defaults for absent fields ----------------------------------------------------------------

# KAI@v0.17.0 pkg/apis/kai/v1 SetDefaultsWhereNeeded (each filled only if unset); v0.9.x defaulted the
# node-pool label key to empty.
_GLOBAL_DEFAULTS: dict[str, JSONValue] = {
    "namespace": "kai-scheduler",
    "global.schedulerName": "kai-scheduler",
    "global.queueLabelKey": "kai.scheduler/queue",
    "global.nodePoolLabelKey": "kai.scheduler/node-pool",
    "global.replicaCount": 1,
    "admission.validatingWebhookConfigurationName": "validating-kai-admission",
    "admission.mutatingWebhookConfigurationName": "mutating-kai-admission",
    "binder.resourceReservation.namespace": "kai-resource-reservation",
    "binder.resourceReservation.serviceAccountName": "kai-resource-reservation",
    "binder.resourceReservation.appLabel": "kai-resource-reservation",
}


def operator_default(path: str, version: str, fields: dict[str, ConfigField]) -> JSONValue | None:
    if path == "global.nodePoolLabelKey" and version == "v0.9.20":
        return ""
    if path in _GLOBAL_DEFAULTS:
        return _GLOBAL_DEFAULTS[path]
    parts = path.split(".")
    blocks = {block for _, block in COMPONENTS}
    if len(parts) == 2 and parts[0] in blocks and parts[1] == "replicas":
        replicas = fields.get("global.replicaCount")
        return replicas.value if replicas else 1
    if len(parts) == 3 and parts[0] in blocks and parts[1:] == ["service", "enabled"]:
        return parts[0] != "nodeScaleAdjuster"
    return None


# -- the render -------------------------------------------------------------------------------------------


@dataclass
class ValueSource:
    """Where each values key lives in Git: the values file, or the add-on's environment file."""

    doc: str
    user: JSONObject  # what Git sets (the values file, or what the stack forwards)
    pin: tuple[str, YamlPath]  # the chart pin: where a chart default points
    forwarded: dict[YamlPath, YamlPath] = field(default_factory=dict)  # add-on: values path -> env path
    anchor: YamlPath | None = None  # add-on: where anything else points (addons.kaiScheduler.enabled)

    def locate(self, values_path: YamlPath) -> tuple[str, YamlPath, bool]:
        if self.anchor is not None:
            for prefix, env_path in self.forwarded.items():
                if values_path[: len(prefix)] == prefix:
                    return self.doc, env_path + values_path[len(prefix) :], True
            return self.doc, self.anchor, False
        if _has_path(self.user, values_path):
            return self.doc, values_path, True
        return self.pin[0], self.pin[1], False


class _Render:
    def __init__(self, version: str, values: JSONObject, where: ValueSource, app_version: str) -> None:
        self.version = version
        self.values = values
        self.where = where
        self.app_version = app_version
        self.fields: dict[str, ConfigField] = {}

    def get(self, path: YamlPath) -> JSONValue:
        node: JSONValue = self.values
        for part in path:
            if not isinstance(node, dict):
                return None
            node = node.get(str(part))
        return node

    def has(self, path: YamlPath) -> bool:
        return _has_path(self.values, path)

    def put(self, config_path: str, values_path: YamlPath, value: JSONValue = None, *, given: bool = False) -> None:
        doc, source, from_values = self.where.locate(values_path)
        self.fields[config_path] = ConfigField(
            config_path, copy_values(value if given else self.get(values_path)), doc, source, from_values
        )

    def put_if_set(self, config_path: str, values_path: YamlPath) -> None:
        value = self.get(values_path)
        if value not in (None, "", {}, [], False):
            self.put(config_path, values_path)

    def const(self, config_path: str, value: JSONValue) -> None:
        doc, source = self.where.pin
        self.fields[config_path] = ConfigField(config_path, value, doc, source, False)

    def registry(self) -> str:
        registry = self.get(("global", "registry"))
        return RELEASED_REGISTRY if registry in (None, "", PLACEHOLDER_REGISTRY) else str(registry)

    def tag(self, *image_path: str) -> tuple[str, YamlPath]:
        """<image>.tag, then global.tag, then the chart's appVersion, plus -fips when global.fips."""
        if self.version == "v0.9.20":  # v0.9.x always uses the chart version
            return self.app_version, ()
        for path in ((*image_path, "tag"), ("global", "tag")):
            value = self.get(path)
            if value:
                return self._fips(str(value)), path
        return self._fips(self.app_version), ()

    def _fips(self, tag: str) -> str:
        """-fips when the chart's FIPS switch is on: `global.fips: true` (v0.16.4 on), or `global.fipsMode: "on"`
        where the chart's own values have fipsMode (the v0.17 branch renamed it, with no fallback: #2011)."""
        if "fipsMode" in mapping_at(chart_defaults(self.version), "global"):
            return f"{tag}-fips" if self.get(("global", "fipsMode")) == "on" else tag
        return f"{tag}-fips" if self.get(("global", "fips")) is True else tag

    def image(self, config_path: str, image_path: YamlPath, default_name: str, *, name_only: bool = False) -> None:
        name = self.get((*image_path, "name")) or default_name
        self.put(f"{config_path}.name", (*image_path, "name"), name, given=True)
        self.put(f"{config_path}.repository", ("global", "registry"), self.registry(), given=True)
        if name_only:
            return
        tag, tag_path = self.tag(*map(str, image_path))
        if tag_path:
            self.put(f"{config_path}.tag", tag_path, tag, given=True)
        else:
            self.const(f"{config_path}.tag", tag)
        policy_path: YamlPath = (*image_path, "pullPolicy")
        if not self.get(policy_path):
            policy_path = ("global", "imagePullPolicy")
        self.put(f"{config_path}.pullPolicy", policy_path, self.get(policy_path) or "IfNotPresent", given=True)


def render_kai_config(
    version: str, values: JSONObject, where: ValueSource, app_version: str, namespace: str = "kai-scheduler"
) -> DesiredKaiConfig:
    """The Config chart column `version` renders from the effective values `values`."""
    render = _Render(version, values, where, app_version)
    render.const("namespace", namespace)
    _global(render)
    for values_key, block in COMPONENTS:
        _component(render, values_key, block)
    _admission(render)
    _binder(render)
    _node_scale_adjuster(render)
    _scheduler_and_prometheus(render)
    _numa_placement_exporter(render)
    return DesiredKaiConfig(version, render.fields)


def _global(r: _Render) -> None:
    v = r.version
    for key in ("namespaceLabelSelector", "podLabelSelector", "affinity", "tolerations", "securityContext"):
        r.put_if_set(f"global.{key}", ("global", key))
    if v in since("v0.10.5"):
        r.put_if_set("global.requireDefaultPodAntiAffinityTerm", ("global", "requireDefaultPodAntiAffinityTerm"))
    if v in since("v0.13.4"):
        r.put_if_set("global.nodeSelector", ("global", "nodeSelector"))
    secrets = [s.get("name") for s in _mappings(r.get(("global", "imagePullSecrets")))]
    # v0.10.5, v0.12.13 and v0.13.4 write imagesPullSecret, which their CRD prunes (KAI#942)
    if secrets and v in {"v0.9.20", "v0.12.23"} | since("v0.14.7"):
        r.put("global.additionalImagePullSecrets", ("global", "imagePullSecrets"), secrets, given=True)
    r.put("global.replicaCount", ("operator", "replicaCount"))
    if v in since("v0.14.7"):
        r.put("global.vpa", ("global", "vpa"))
    if v in since("v0.15.3"):
        r.put_if_set("global.jsonLog", ("global", "jsonLog"))
    if v in since("v0.17.0"):
        r.put_if_set("global.priorityClassName", ("global", "priorityClassName"))
    if v == "v0.9.20":
        r.const("global.queueLabelKey", "kai.scheduler/queue")
        r.const("global.nodePoolLabelKey", "kai.scheduler/nodepool")
        r.const("global.schedulerName", "kai-scheduler")
    if v in since("v0.16.8"):
        r.put_if_set("global.queueLabelKey", ("podgrouper", "queueLabelKey"))
        r.put_if_set("global.nodePoolLabelKey", ("global", "nodePoolLabelKey"))


def _component(r: _Render, key: str, block: str) -> None:
    v = r.version
    if v == "v0.9.20" and key in ("binder", "scheduler"):
        return  # chart Deployments in v0.9.x, not operands of the Config
    if key == "podgrouper" and v not in since("v0.13.4"):
        return  # v0.12.x and older render no podGrouper block at all (KAI#859)
    service = f"{block}.service"
    if key == "nodescaleadjuster":
        r.put(
            f"{service}.enabled",
            ("global", "clusterAutoscaling"),
            r.get(("global", "clusterAutoscaling")) is True,
            given=True,
        )
    elif v in since("v0.15.3"):
        r.put(f"{service}.enabled", (key, "enabled"), r.get((key, "enabled")) is not False, given=True)
    elif key != "scheduler":
        r.const(f"{service}.enabled", True)
    # before v0.15.3 scheduler.service has no `enabled`: the operator defaults it in memory, not in the object
    r.image(f"{service}.image", (key, "image"), key)
    if v in since("v0.10.5"):
        r.put_if_set(f"{service}.resources", (key, "resources"))
        r.put_if_set(f"{service}.affinity", (key, "affinity"))


def _admission(r: _Render) -> None:
    v = r.version
    r.put("admission.gpuSharing", ("global", "gpuSharing"), r.get(("global", "gpuSharing")) is True, given=True)
    if v in since("v0.16.8"):
        r.put(
            "admission.blockNvidiaVisibleDevices",
            ("global", "blockNvidiaVisibleDevices"),
            r.get(("global", "blockNvidiaVisibleDevices")) is True,
            given=True,
        )
    r.const("admission.webhook.port", 443)
    for port, config_key in (("webhookPort", "targetPort"), ("probePort", "probePort"), ("metricsPort", "metricsPort")):
        r.put(f"admission.webhook.{config_key}", ("admission", "ports", port))
    r.const("admission.queueLabelSelector", False)
    runtime: YamlPath = ("admission", "gpuPodRuntimeClassName")
    if v in {"v0.9.20", "v0.10.5", "v0.12.13", "v0.12.23"}:
        r.put("admission.gpuPodRuntimeClassName", runtime, r.get(runtime) or "nvidia", given=True)
    elif r.has(runtime) and (
        v in {"v0.13.4", "v0.14.7", "v0.15.3"} or not r.has(("admission", "gpuFractionRuntimeClassName"))
    ):
        r.put("admission.gpuPodRuntimeClassName", runtime)
    if v in since("v0.16.8"):
        if r.has(("admission", "gpuFractionRuntimeClassName")):
            r.put("admission.gpuFractionRuntimeClassName", ("admission", "gpuFractionRuntimeClassName"))
        r.put_if_set("admission.service.podDisruptionBudget", ("admission", "podDisruptionBudget"))


def _binder(r: _Render) -> None:
    v = r.version
    if v not in since("v0.10.5"):
        return
    r.put("binder.metricsPort", ("binder", "ports", "metricsPort"))
    r.put_if_set("binder.resourceReservation.runtimeClassName", ("binder", "runtimeClassName"))
    r.put_if_set("binder.resourceReservation.podResources", ("binder", "resourceReservationPodResources"))
    r.image(
        "binder.resourceReservation.image",
        ("binder", "resourceReservationImage"),
        "resourcereservation",
        name_only=v not in since("v0.13.4"),
    )
    if v in since("v0.13.4"):
        for key, config_key in (
            ("namespace", "namespace"),
            ("serviceAccount", "serviceAccountName"),
            ("appLabel", "appLabel"),
        ):
            r.put(f"binder.resourceReservation.{config_key}", ("global", "resourceReservation", key))
    if v in since("v0.12.13") and r.has(("binder", "cdiEnabled")):
        r.put("binder.cdiEnabled", ("binder", "cdiEnabled"))
    if v in since("v0.15.3"):
        r.put_if_set("binder.plugins", ("binder", "plugins"))


def _node_scale_adjuster(r: _Render) -> None:
    r.put("nodeScaleAdjuster.args.nodeScaleNamespace", ("nodescaleadjuster", "scalingPodNamespace"))
    if r.version in since("v0.10.5"):
        r.image("nodeScaleAdjuster.args.scalingPodImage", ("nodescaleadjuster", "scalingPodImage"), "scalingpod")


def _scheduler_and_prometheus(r: _Render) -> None:
    v = r.version
    if v in since("v0.10.5"):
        r.put("scheduler.schedulerService.port", ("scheduler", "ports", "metricsPort"))
    if v in since("v0.15.3") and r.get(("prometheus", "enabled")) is True:
        r.put("prometheus.enabled", ("prometheus", "enabled"))
        r.put_if_set("prometheus.externalPrometheusUrl", ("prometheus", "externalPrometheusUrl"))
    if v in since("v0.17.0"):
        r.put_if_set("podGrouper.service.podDisruptionBudget", ("podgrouper", "podDisruptionBudget"))
        r.put_if_set("scheduler.service.podDisruptionBudget", ("scheduler", "podDisruptionBudget"))
        if r.has(("podgrouper", "genericKartaFallback")):
            r.put("podGrouper.args.genericKartaFallback", ("podgrouper", "genericKartaFallback"))


def _numa_placement_exporter(r: _Render) -> None:
    if r.version not in since("v0.16.8"):
        return
    base: YamlPath = ("numaPlacementExporter",)
    r.image("numaPlacementExporter.service.image", (*base, "image"), "numa-placement-exporter")
    if r.has((*base, "enabled")):
        r.put("numaPlacementExporter.service.enabled", (*base, "enabled"))
    for key in ("resources", "affinity"):
        r.put_if_set(f"numaPlacementExporter.service.{key}", (*base, key))
    keys = ["nodeSelector", "tolerations", "pollInterval", "driftResyncInterval"]
    if r.version in since("v0.17.0"):
        keys += ["podResourcesHostPath", "podResourcesSocket", "sysfsHostPath"]
    for key in keys:
        r.put_if_set(f"numaPlacementExporter.{key}", (*base, key))


# -- what a patch of kai-config may set ------------------------------------------------------------


def spec_field_types() -> dict[str, str]:
    """Every dotted spec path a desired kai-config of any modelled column can hold, or that the operator
    defaults, with its value type ("bool", "text", "number", "structure"): the fields a plan may patch."""
    samples: dict[str, JSONValue] = {}
    for version in COLUMNS:
        for path, value in _column_samples(version).items():
            samples.setdefault(path, value)
    for path in _GLOBAL_DEFAULTS:
        samples.setdefault(path, _GLOBAL_DEFAULTS[path])
    for _, block in COMPONENTS:
        samples.setdefault(f"{block}.replicas", 1)
    return {path: _type_of(value) for path, value in samples.items()}


def column_fields(version: str) -> frozenset[str]:
    """The dotted spec paths chart column `version` can render into kai-config (every optional value set): the
    fields a KAI of that version is known to serve."""
    return frozenset(_column_samples(version))


@functools.cache
def _column_samples(version: str) -> dict[str, JSONValue]:
    samples: dict[str, JSONValue] = {}
    for values in _sample_values(version):
        where = ValueSource("values", values, ("config", ()))
        for item in render_kai_config(version, values, where, version).fields.values():
            samples.setdefault(item.path, item.value)
    return samples


def _sample_values(version: str) -> Iterator[JSONObject]:
    """Every optional value set; then, for each deprecated key the chart still honours while its replacement is
    unset (admission.gpuPodRuntimeClassName from v0.16.0), that key alone: the field it renders is one the
    chart can render too."""
    every = deep_merge(chart_defaults(version), _EVERY_OPTIONAL_VALUE)
    yield every
    for change in KEY_CHANGES:
        if change.change is Change.DEPRECATED and change.new_path and change.applies_to(version):
            alone = copy_values(every)
            parent = alone
            for key in change.new_path[:-1]:
                parent = mapping_at(parent, str(key)) if isinstance(parent, dict) else {}
            if isinstance(parent, dict):
                parent.pop(str(change.new_path[-1]), None)
            yield deep_merge(alone if isinstance(alone, dict) else {}, _nested(change.path, "sample"))


def _nested(path: YamlPath, value: JSONValue) -> JSONObject:
    for key in reversed(path[1:]):
        value = {str(key): value}
    return {str(path[0]): value}


# One value for each field the chart renders only when set, so that the table above names it.
_EVERY_OPTIONAL_VALUE: JSONObject = {
    "global": {
        "namespaceLabelSelector": {"a": "b"},
        "podLabelSelector": {"a": "b"},
        "affinity": {"a": {}},
        "tolerations": [{}],
        "securityContext": {"a": 1},
        "requireDefaultPodAntiAffinityTerm": True,
        "nodeSelector": {"a": "b"},
        "imagePullSecrets": [{"name": "a"}],
        "jsonLog": True,
        "priorityClassName": "a",
        "nodePoolLabelKey": "a",
    },
    **{key: {"resources": {"a": {}}, "affinity": {"a": {}}} for key, _ in COMPONENTS},
    "binder": {
        "resources": {"a": {}},
        "affinity": {"a": {}},
        "runtimeClassName": "a",
        "resourceReservationPodResources": {"a": {}},
        "cdiEnabled": True,
        "plugins": {"a": {}},
    },
    "prometheus": {"enabled": True, "externalPrometheusUrl": "a"},
    "numaPlacementExporter": {
        "enabled": True,
        "resources": {"a": {}},
        "affinity": {"a": {}},
        "nodeSelector": {"a": "b"},
        "tolerations": [{}],
        "pollInterval": "a",
        "driftResyncInterval": "a",
        "podResourcesHostPath": "a",
        "podResourcesSocket": "a",
        "sysfsHostPath": "a",
    },
}


def _type_of(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "structure"


# -- add-on: what the stack forwards ------------------------------------------------------------------

# helmfile.d/01-dependencies.yaml.gotmpl: each number addons.kaiScheduler.<component>.resources leaves out
# (the render of the stack's local environment, testdata/golden/local/kai-config-manifest-configmap.yaml).
ADDON_RESOURCE_DEFAULTS: dict[str, JSONObject] = {
    "podgrouper": {"limits": {"cpu": "1000m", "memory": "4Gi"}, "requests": {"cpu": "50m", "memory": "512Mi"}},
    "podgroupcontroller": {"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {"cpu": "50m", "memory": "256Mi"}},
    "queuecontroller": {"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {"cpu": "50m", "memory": "256Mi"}},
    "admission": {"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {"cpu": "50m", "memory": "256Mi"}},
    "binder": {"limits": {"cpu": "4000m", "memory": "4Gi"}, "requests": {"cpu": "50m", "memory": "2Gi"}},
    "scheduler": {"limits": {"cpu": "2000m", "memory": "6Gi"}, "requests": {"cpu": "500m", "memory": "3Gi"}},
    "nodescaleadjuster": {"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {"cpu": "50m", "memory": "256Mi"}},
    "numaPlacementExporter": {
        "limits": {"cpu": "1000m", "memory": "1Gi"},
        "requests": {"cpu": "50m", "memory": "64Mi"},
    },
}
ADDON_SECURITY_CONTEXT: JSONObject = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "runAsUser": 10000,
}


def addon_forwarded_values(env: JSONObject, canonical: JSONObject) -> tuple[JSONObject, dict[YamlPath, YamlPath]]:
    """The KAI values the stack builds from an environment, and where each forwarded key sits in it."""
    kai = mapping_at(mapping_at(env, "addons"), "kaiScheduler")
    env_global = mapping_at(env, "global")
    values: JSONObject = deep_merge(canonical, {"global": {"securityContext": copy_values(ADDON_SECURITY_CONTEXT)}})
    where: dict[YamlPath, YamlPath] = {}
    glob = mapping_at(values, "global")
    secrets = env_global.get("imagePullSecrets")
    if secrets:
        glob["imagePullSecrets"] = copy_values(secrets)
        where[("global", "imagePullSecrets")] = ("global", "imagePullSecrets")
    tolerations = env_global.get("tolerations")
    if tolerations:
        glob["tolerations"] = copy_values(tolerations)
        where[("global", "tolerations")] = ("global", "tolerations")
    selector = mapping_at(env_global, "nodeSelector")
    if selector.get("enabled") is True and selector.get("key"):
        glob["nodeSelector"] = {str(selector["key"]): copy_values(selector.get("value", ""))}
        where[("global", "nodeSelector")] = ("global", "nodeSelector")
    values["global"] = glob
    for component, defaults in ADDON_RESOURCE_DEFAULTS.items():
        given = mapping_at(mapping_at(kai, component), "resources")
        resources: JSONObject = {}
        for side in ("limits", "requests"):
            numbers = mapping_at(defaults, side)
            mine = mapping_at(given, side)
            resources[side] = {k: copy_values(mine.get(k, numbers[k])) for k in ("cpu", "memory")}
        values[component] = deep_merge(mapping_at(values, component), {"resources": resources})
        if given:
            where[(component, "resources")] = ("addons", "kaiScheduler", component, "resources")
    return values, where


# -- a Config kept in Git ---------------------------------------------------------------------------------


def from_manifest(version: str, spec: JSONObject, doc: str) -> DesiredKaiConfig:
    """A kai-config applied from Git (kaiManifestFiles): each leaf of its spec at its own line."""
    fields = {
        ".".join(path): ConfigField(".".join(path), copy_values(value), doc, ("spec", *path), True)
        for path, value in _leaves(spec, ())
    }
    return DesiredKaiConfig(version, fields, managed_in_git=True)


def _leaves(node: JSONValue, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], JSONValue]]:
    if isinstance(node, dict) and node and not _free_form(prefix):
        for key, value in node.items():
            yield from _leaves(value, (*prefix, str(key)))
    else:
        yield prefix, node


# Maps whose keys are Kubernetes fields or user names: compared as one value.
_FREE_FORM = frozenset(
    {
        "resources",
        "affinity",
        "securityContext",
        "tolerations",
        "nodeSelector",
        "vpa",
        "namespaceLabelSelector",
        "podLabelSelector",
        "podResources",
        "plugins",
        "podDisruptionBudget",
    }
)


def _free_form(prefix: tuple[str, ...]) -> bool:
    return bool(prefix) and prefix[-1] in _FREE_FORM


def leaves(spec: JSONValue) -> dict[str, JSONValue]:
    """A live spec's fields, keyed by dotted path, at the granularity the desired fields use."""
    return {".".join(path): value for path, value in _leaves(spec, ()) if path}


def _has_path(data: JSONValue, path: YamlPath) -> bool:
    node = data
    for part in path:
        if not isinstance(node, dict) or str(part) not in node:
            return False
        node = node[str(part)]
    return True


def _mappings(value: JSONValue) -> list[JSONObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
