"""A cluster's desired state, the live objects it implies (docs/configuration.md#how-desired-state-is-interpreted)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from typing import Literal, TypeGuard

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue, as_object, expect_object, mapping_at
from reconciler.core.names import dns_subdomain, require
from reconciler.core.refs import Location, YamlPath
from reconciler.core.resources import CONFIG, KRM_CONFIG, KRM_KINDS, QUEUE, SCHEDULING_SHARD
from reconciler.model.chart_keys import chart_keys, has_key
from reconciler.model.config import ClusterConfig, SharedClusterIntent
from reconciler.model.gates import stack_effective_gates
from reconciler.model.kai_config import (
    CONFIG_NAME,
    DesiredKaiConfig,
    ValueSource,
    addon_forwarded_values,
    from_manifest,
    render_kai_config,
    since,
)
from reconciler.model.krm import KrmObjects
from reconciler.model.provenance import ASSUMED, Origin, Provenance
from reconciler.model.queues import RESOURCES, QueueSpec, queue_spec_from_values, triple_from_values
from reconciler.model.values import chart_defaults, deep_merge, defaults_version_for, parse_version
from reconciler.yamlio.document import YamlDoc, load_document, load_documents

RELEASE_NAME = "kai-scheduler"
RELEASE_NAMESPACE = "kai-scheduler"
KAI_CHART_REF = "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler"
DEFAULT_PARENT = "default-parent-queue"
DEFAULT_CHILD = "default-queue"
ENV_GATES_PATH: YamlPath = ("global", "nvcaOperator", "selfManaged", "featureGateValues")
NVCA_GATES_PATH: YamlPath = ("selfManaged", "featureGateValues")
NVCA_CHART_DEFAULT_GATES = ["DynamicGPUDiscovery"]
ADDONS = ("kaiScheduler", "groveOperator", "dynamoOperator", "topologyAwareScheduling")
# Reads a repository file at the chosen ref: its bytes, or UserError.
FileReader = Callable[[str], bytes]


class QueueOrigin(StrEnum):
    """What declares an expected queue."""

    DEFAULT_QUEUE = "default-queue"  # the chart's template, from the release's values
    QUEUE_FILE = "queue-file"  # a Queue manifest in the cluster's queue files


@dataclass(frozen=True)
class ExpectedQueue:
    spec: QueueSpec
    doc: str  # doc id holding the values that define it
    paths: dict[str, YamlPath]  # "parent", "<resource>.<field>" -> YAML path in `doc`
    origin: QueueOrigin


@dataclass(frozen=True)
class ExpectedShard:
    spec: JSONObject  # placementStrategy, plugins, actions as Helm renders them
    doc: str
    path: YamlPath


@dataclass(frozen=True)
class KaiManifest:
    """A KAI Config or SchedulingShard object kept in Git and applied outside the chart."""

    kind: str
    name: str
    doc: str  # doc id holding it


@dataclass(frozen=True)
class DesiredGates:
    doc: str
    path: YamlPath
    user: list[str]
    effective: list[str]


@dataclass
class DesiredCluster:
    config: ClusterConfig
    commit: str | None
    docs: dict[str, YamlDoc]
    defaults_version: str
    kai_values_doc: str | None
    kai_values_user: JSONObject
    kai_values_effective: JSONObject
    addons: dict[str, bool]
    queues: list[ExpectedQueue] = field(default_factory=list)
    shard: ExpectedShard | None = None
    gates: DesiredGates | None = None
    installs_kai: bool = True
    kai_manifests: list[KaiManifest] = field(default_factory=list)
    stack_base: JSONObject | None = None  # the repo's own copy of the stack's base.yaml (stackBaseFile)
    kai_config: DesiredKaiConfig | None = None  # None: Git installs no KAI, or kai-config is managed elsewhere
    kai_config_elsewhere: bool = False  # the values turn both the chart's render and its deployer off
    kai_config_in_release: bool = False  # v0.17.0+ kaiConfig.render: a regular resource of the Helm release
    # KAI Resource Management objects kept in Git (krmFiles): what generates Queues and shards on a KRM cluster
    krm: KrmObjects = field(default_factory=KrmObjects)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def shared(self) -> SharedClusterIntent:
        return self.config.shared_cluster

    @property
    def shared_provenance(self) -> Provenance:
        """The shared-cluster intent is declared in kai-gitops.yaml, or not at all: then nothing is assumed."""
        if not self.shared.declared:
            return ASSUMED
        return Provenance(Origin.DECLARED, "config", ("clusters", self.config.index, "sharedCluster"))

    def queue_provenance(self, queue: ExpectedQueue, key: str) -> Provenance:
        """Where a Queue field's value comes from (`key`: "parent" or "<resource>.<field>"): a line of a queue
        file or of the values file, else the pinned chart's default rendered from Git's values (the default
        queues are the chart's template: in add-on mode the stack's canonical values)."""
        path = queue.paths.get(key, queue.paths["parent"])
        doc = self.docs.get(queue.doc)
        if queue.origin == QueueOrigin.QUEUE_FILE or (
            doc is not None and queue.doc != "env" and doc.get(path) is not None
        ):
            return Provenance(Origin.DECLARED, queue.doc, path)
        return Provenance(Origin.CHART, queue.doc, path)

    def locate(self, doc: str | None, path: YamlPath | None) -> Location | None:
        if doc is None or doc not in self.docs:
            return None
        return self.docs[doc].locate(tuple(path or ()))

    @property
    def kai_upgrade_command(self) -> str:
        """How the operator brings the KAI release to Git's version and values: one text for every finding that
        asks for it (KAI-D-003, KAI-D-004, and KAI-R-012 through the facts), so they never name different files."""
        return self._kai_release_command("upgrade")

    @property
    def kai_install_command(self) -> str:
        """How the operator installs the missing KAI release (KAI-R-010, NVCA-H-001 through the facts)."""
        return self._kai_release_command("install")

    def _kai_release_command(self, verb: Literal["install", "upgrade"]) -> str:
        """The one place a KAI Helm command is written: Git's values file, or the stack workflow in add-on mode."""
        if self.config.mode == "addon":
            return f"apply environment {self.config.environment_file} through the compute plane stack workflow"
        values = self.config.kai_values_file or "values.yaml"
        create = " --create-namespace" if verb == "install" else ""
        return (
            f"helm {verb} {RELEASE_NAME} {KAI_CHART_REF} --namespace {RELEASE_NAMESPACE}{create} "
            f"--version {self.config.kai_chart_version} -f {values}"
        )

    def release_values_anchor(self) -> tuple[str, YamlPath]:
        """Where to point a finding about the release's values."""
        if self.kai_values_doc:
            return self.kai_values_doc, ()
        return "env", ("addons", "kaiScheduler", "enabled")


@functools.cache
def canonical_kai_values() -> JSONObject:
    text = resources.files("reconciler").joinpath("data/canonical-kai-values.yaml").read_text()
    return expect_object(load_document(text, "canonical-kai-values.yaml").data, "canonical-kai-values.yaml")


def build_desired(read: FileReader, config_doc: YamlDoc, cluster: ClusterConfig, commit: str | None) -> DesiredCluster:
    """`read(path) -> bytes` reads a repo file at the chosen ref."""
    docs: dict[str, YamlDoc] = {"config": config_doc}
    if cluster.environment_file:
        docs["env"] = _load_env(read, cluster)
    if cluster.kai_values_file:
        docs["kai_values"] = _load_mapping(read, cluster.kai_values_file)
    if cluster.nvca_values_file:
        docs["nvca_values"] = _load_mapping(read, cluster.nvca_values_file)
    for i, path in enumerate(cluster.queue_files):
        for j, doc in enumerate(_load_queue_docs(read, path)):
            docs[f"queues:{i}:{j}"] = doc
    manifests = []
    for i, path in enumerate(cluster.kai_manifest_files):
        for doc, manifest in _load_kai_manifests(read, path, f"kai_manifests:{i}"):
            docs[manifest.doc] = doc
            manifests.append(manifest)
    krm = KrmObjects()
    for i, path in enumerate(cluster.krm_files):
        for j, doc in enumerate(_load_krm_docs(read, path)):
            docs[f"krm:{i}:{j}"] = doc
            krm.add(doc.mapping(), f"krm:{i}:{j}")

    addons = _addons(docs.get("env"))
    version = defaults_version_for(cluster.kai_chart_version)
    user_values, values_doc = _user_kai_values(cluster, docs)
    effective = deep_merge(chart_defaults(version), user_values)
    desired = DesiredCluster(cluster, commit, docs, version, values_doc, user_values, effective, addons)
    # Add-on mode with the add-on off: Git installs no KAI, so it expects no chart objects either.
    installs_kai = cluster.mode == "standalone" or addons["kaiScheduler"]
    template_queues = _expected_default_queues(desired) if installs_kai else []
    desired.queues = _unique_queues(desired, template_queues + _queue_files(docs))
    desired.shard = _expected_shard(desired) if installs_kai else None
    desired.installs_kai = installs_kai
    desired.kai_manifests = manifests
    desired.krm = krm
    if installs_kai:
        desired.kai_config, desired.kai_config_elsewhere = _desired_kai_config(desired)
        desired.kai_config_in_release = _renders_kai_config_in_release(desired)
    if cluster.stack_base_file and "env" in docs:
        desired.stack_base = _load_mapping(read, cluster.stack_base_file).mapping()
    desired.gates = _desired_gates(docs, addons)
    return desired


def _desired_kai_config(desired: DesiredCluster) -> tuple[DesiredKaiConfig | None, bool]:
    """kai-config as Git defines it: a Config kept in Git, else what the pinned chart renders from the values."""
    version = desired.defaults_version
    for manifest in desired.kai_manifests:
        if (manifest.kind, manifest.name) == (CONFIG.kind, CONFIG_NAME):
            spec = mapping_at(desired.docs[manifest.doc].mapping(), "spec")
            return from_manifest(version, spec, manifest.doc), False
    values = desired.kai_values_effective
    deployer = as_object(values.get("kaiConfigDeployer")).get("enabled")
    render = as_object(values.get("kaiConfig")).get("render") is True
    # From v0.16.0 kaiConfigDeployer.enabled gates the deployer; with render off too, no chart writes kai-config.
    if version in since("v0.16.8") and deployer is False and not render:
        return None, True
    pin = ("config", ("clusters", desired.config.index, "kaiChartVersion"))
    app_version = desired.config.kai_chart_version
    app_version = app_version if app_version.startswith("v") else f"v{app_version}"
    env = desired.docs.get("env")
    if desired.kai_values_doc is None and env is not None:
        # the stack installs its own pinned KAI chart, not kaiChartVersion
        app_version = desired.config.stack_kai_version
        version = defaults_version_for(app_version)
        forwarded, where = addon_forwarded_values(env.mapping(), desired.kai_values_user)
        source = ValueSource("env", forwarded, pin, where, ("addons", "kaiScheduler", "enabled"))
        values = deep_merge(chart_defaults(version), forwarded)
    else:
        source = ValueSource(desired.kai_values_doc or "config", desired.kai_values_user, pin)
    return render_kai_config(version, values, source, app_version, RELEASE_NAMESPACE), False


def _renders_kai_config_in_release(desired: DesiredCluster) -> bool:
    """v0.17.0's `kaiConfig.render: true` renders kai-config inline, so Helm must own the live one."""
    version = parse_version(desired.defaults_version)
    rendered = as_object(desired.kai_values_effective.get("kaiConfig")).get("render") is True
    return rendered and version is not None and version >= (0, 17, 0)


def _load_mapping(read: FileReader, path: str) -> YamlDoc:
    doc = load_document(read(path), path, shared=True)  # read-only here: merges copy (values.deep_merge)
    if not isinstance(doc.data, dict):
        raise UserError(f"expected a YAML mapping, found {type(doc.data).__name__}", where=f"{path}:1")
    return doc


def _load_env(read: FileReader, cluster: ClusterConfig) -> YamlDoc:
    """Operator env file with the stack's base.yaml merged under it (env wins, lists replace)."""
    env = _load_mapping(read, cluster.environment_file or "")
    if cluster.stack_base_file:
        base = _load_mapping(read, cluster.stack_base_file).mapping()
    else:
        text = resources.files("reconciler").joinpath("data/stack/base.yaml").read_text()
        base = load_document(text, "stack/base.yaml", shared=True).mapping()
    return YamlDoc(env.file, deep_merge(base, env.data), env.positions, env.spans)


def _load_queue_docs(read: FileReader, path: str) -> list[YamlDoc]:
    from reconciler.yamlio.document import load_documents

    docs = load_documents(read(path), path, shared=True)
    for doc in docs:
        if not isinstance(doc.data, dict) or doc.data.get("kind") != QUEUE.kind:
            raise UserError(
                "queue files may hold only KAI Queue objects (kind: Queue)", where=str(doc.locate(("kind",)))
            )
        if doc.data.get("apiVersion") != QUEUE.api_version:
            raise UserError(
                f"Queue apiVersion must be {QUEUE.api_version}, found {doc.data.get('apiVersion')!r}",
                where=str(doc.locate(("apiVersion",))),
                hint="KAI serves Queues only as v2",
            )
        name = as_object(doc.data.get("metadata")).get("name")
        if not isinstance(name, str) or not name:
            raise UserError("Queue has no metadata.name", where=str(doc.locate(("metadata",))))
        _check_types(doc, _queue_manifest_types())
        _check_queue_names(doc, (("metadata", "name"), ("spec", "parentQueue")))
    return docs


def _check_queue_names(doc: YamlDoc, paths: Iterable[YamlPath]) -> None:
    """Queue names as the API server takes them (a custom resource's name is a DNS-1123 subdomain): a name
    it would refuse can never match the cluster, and is printed in reports, plans and commands."""
    for path in paths:
        name = doc.get(path)
        if isinstance(name, str) and name:  # an empty parent or default-queue name means "none" / the default
            require(dns_subdomain, name, f"Queue name {'.'.join(map(str, path))}", str(doc.locate(path)))


def _load_kai_manifests(read: FileReader, path: str, prefix: str) -> list[tuple[YamlDoc, KaiManifest]]:
    from reconciler.yamlio.document import load_documents

    found = []
    for j, doc in enumerate(load_documents(read(path), path, shared=True)):
        data = doc.data if isinstance(doc.data, dict) else {}
        kinds = {(r.api_version, r.kind) for r in (CONFIG, SCHEDULING_SHARD)}
        if (data.get("apiVersion"), data.get("kind")) not in kinds:
            raise UserError(
                "KAI manifest files may hold only kai.scheduler/v1 Config and SchedulingShard objects",
                where=str(doc.locate(("kind",))),
                hint="keep Queues in queueFiles",
            )
        name = as_object(data.get("metadata")).get("name")
        if not isinstance(name, str) or not name:
            raise UserError(f"{data['kind']} has no metadata.name", where=str(doc.locate(("metadata",))))
        require(dns_subdomain, name, f"{data['kind']} name", str(doc.locate(("metadata", "name"))))
        found.append((doc, KaiManifest(str(data["kind"]), name, f"{prefix}:{j}")))
    return found


def _load_krm_docs(read: FileReader, path: str) -> list[YamlDoc]:
    """KAI Resource Management objects (kai.resources/v1alpha1), each queue entry's fields typed as its CRD types
    them: a number KRM would refuse, or a Kubernetes quantity ("32Gi"), is an error at its line."""
    kinds = {r.type_key for r in KRM_KINDS}
    docs = load_documents(read(path), path, shared=True)
    for doc in docs:
        data = doc.data if isinstance(doc.data, dict) else {}
        if (data.get("apiVersion"), data.get("kind")) not in kinds:
            raise UserError(
                "KRM files may hold only kai.resources/v1alpha1 Project, Department, NodePool and KRMConfig objects",
                where=str(doc.locate(("kind",))),
                hint="keep Queues in queueFiles",
            )
        name = as_object(data.get("metadata")).get("name")
        if not isinstance(name, str) or not name:
            raise UserError(f"{data['kind']} has no metadata.name", where=str(doc.locate(("metadata",))))
        require(dns_subdomain, name, f"{data['kind']} name", str(doc.locate(("metadata", "name"))))
        _check_types(doc, _krm_types(doc))
    return docs


def _krm_types(doc: YamlDoc) -> list[tuple[YamlPath, tuple[type, ...], str]]:
    """Every field model/krm.py reads, typed: a KRMConfig's `allowExternalQueues: "true"` read as off, or a
    `global` list read as a mapping, would be a silent wrong answer or a crash."""
    checks: list[tuple[YamlPath, tuple[type, ...], str]] = [
        (("metadata",), (dict,), "a mapping"),
        (("spec",), (dict,), "a mapping"),
        (("spec", "queues"), (list,), "a list"),
        (("spec", "parent"), (str,), "a string"),
    ]
    if doc.get(("kind",)) == KRM_CONFIG.kind:
        checks += [
            (("spec", "global"), (dict,), "a mapping"),
            (("spec", "global", "allowExternalQueues"), (bool,), "true or false"),
            (("spec", "global", "defaultNodePoolName"), (str,), "a string"),
        ]
    queues = doc.get(("spec", "queues"))
    for i in range(len(queues) if isinstance(queues, list) else 0):
        entry: YamlPath = ("spec", "queues", i)
        checks += [
            (entry, (dict,), "a mapping"),
            ((*entry, "name"), (str,), "a string"),
            ((*entry, "nodepool"), (str,), "a string"),
            ((*entry, "resources"), (dict,), "a mapping"),
        ]
        for res in RESOURCES:
            checks.append(((*entry, "resources", res), (dict,), "a mapping of deserved, limit, overQuotaWeight"))
            checks += [
                (
                    (*entry, "resources", res, key),
                    (int, float),
                    "a plain number (cpu in millicores, memory in MB, gpu in devices)",
                )
                for key in ("deserved", "limit", "overQuotaWeight")
            ]
    return checks


def _queue_manifest_types() -> list[tuple[YamlPath, tuple[type, ...], str]]:
    checks: list[tuple[YamlPath, tuple[type, ...], str]] = [
        (("metadata",), (dict,), "a mapping"),
        (("spec",), (dict,), "a mapping"),
        (("spec", "parentQueue"), (str,), "a string"),
        (("spec", "resources"), (dict,), "a mapping"),
    ]
    for res in RESOURCES:
        checks.append((("spec", "resources", res), (dict,), "a mapping"))
        checks += [
            (("spec", "resources", res, key), (int, float), "a number") for key in ("quota", "limit", "overQuotaWeight")
        ]
    return checks


def _addons(env: YamlDoc | None) -> dict[str, bool]:
    result = {}
    for addon in ADDONS:
        value = env.get(("addons", addon, "enabled"), False) if env else False
        if not isinstance(value, bool):
            raise UserError(
                f"addons.{addon}.enabled must be true or false, found {value!r}",
                where=str(env.locate(("addons", addon, "enabled"))) if env else None,
            )
        result[addon] = value
    return result


def _user_kai_values(cluster: ClusterConfig, docs: dict[str, YamlDoc]) -> tuple[JSONObject, str | None]:
    if cluster.mode == "addon":
        return canonical_kai_values(), None
    doc = docs["kai_values"]
    _check_value_types(doc, defaults_version_for(cluster.kai_chart_version))
    return doc.mapping(), "kai_values"


def _check_value_types(doc: YamlDoc, version: str) -> None:
    """The values the model reads, typed at their line; a key of a later chart is left to KAI-V-011 (an unknown
    key for the pin), which says so as a finding instead of stopping the run."""
    known = chart_keys(version)
    _check_types(doc, [c for c in _values_types() if c[0][0] in _SINCE_ALWAYS or has_key(known, c[0])])
    _check_queue_names(doc, (("defaultQueue", "parentName"), ("defaultQueue", "childName")))


_SINCE_ALWAYS = frozenset({"defaultQueue", "scheduler"})  # read by the model at every pin; the rest only where known


def _values_types() -> list[tuple[YamlPath, tuple[type, ...], str]]:
    checks: list[tuple[YamlPath, tuple[type, ...], str]] = [
        (("defaultQueue",), (dict,), "a mapping"),
        (("defaultQueue", "createDefaultQueue"), (bool,), "true or false"),
        (("defaultQueue", "parentName"), (str,), "a string"),
        (("defaultQueue", "childName"), (str,), "a string"),
        (("scheduler",), (dict,), "a mapping"),
        (("scheduler", "placementStrategy"), (str,), "a string"),
        # the default shard's plugins and actions: mappings of name -> {enabled, priority, arguments}
        (("scheduler", "plugins"), (dict,), "a mapping of plugin name to its settings"),
        (("scheduler", "actions"), (dict,), "a mapping of action name to its settings"),
        # read as switches: a quoted "false" must not read as on (nor "true" as off)
        (("defaultShard",), (dict,), "a mapping"),
        (("defaultShard", "enabled"), (bool,), "true or false"),
        (("kaiConfig",), (dict,), "a mapping"),
        (("kaiConfig", "render"), (bool,), "true or false"),
        (("kaiConfigDeployer",), (dict,), "a mapping"),
        (("kaiConfigDeployer", "enabled"), (bool,), "true or false"),
    ]
    for side in ("parentResources", "childResources"):
        checks.append((("defaultQueue", side), (dict,), "a mapping"))
        for res in RESOURCES:
            checks.append((("defaultQueue", side, res), (dict,), "a mapping of quota, limit, overQuotaWeight"))
            for key in ("quota", "limit", "overQuotaWeight"):
                checks.append((("defaultQueue", side, res, key), (int, float), "a number"))
    return checks


def _shown(value: object) -> str:
    """A found value as the error names it: a quoted "false" is the string 'false', not the switch."""
    return f"the string {value!r}" if isinstance(value, str) else repr(value)


def _check_types(doc: YamlDoc, checks: list[tuple[YamlPath, tuple[type, ...], str]]) -> None:
    for path, types, what in checks:
        value = doc.get(path)
        if value is None:
            continue
        dotted = ".".join(map(str, path))
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            raise UserError(
                f"{dotted} must be {what}, found {_shown(value)}",
                where=str(doc.locate(path)),
                hint="fix the value type",
            )
        if isinstance(value, float) and not math.isfinite(value):
            # YAML's .inf/.nan: no Queue the chart renders can hold it (JSON has no such number); unlimited is -1
            written = ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
            raise UserError(
                f"{dotted} must be a finite number, found {written}",
                where=str(doc.locate(path)),
                hint="write a number; -1 means unlimited",
            )


def _expected_default_queues(desired: DesiredCluster) -> list[ExpectedQueue]:
    queue_values = desired.kai_values_effective.get("defaultQueue")
    # Charts before defaultQueue existed (v0.9.x) render no queues: nothing to expect from values.
    if not isinstance(queue_values, dict) or queue_values.get("createDefaultQueue") is False:
        return []
    doc = desired.kai_values_doc or "env"
    base: YamlPath = ("defaultQueue",) if desired.kai_values_doc else ("addons", "kaiScheduler", "enabled")
    parent_name = str(queue_values.get("parentName") or DEFAULT_PARENT)
    child_name = str(queue_values.get("childName") or DEFAULT_CHILD)
    parent = _template_queue(parent_name, None, queue_values.get("parentResources"), doc, base, "parentResources")
    child = _template_queue(child_name, parent_name, queue_values.get("childResources"), doc, base, "childResources")
    return [parent, child]


def _template_queue(
    name: str, parent: str | None, values: JSONValue, doc: str, base: YamlPath, side: str
) -> ExpectedQueue:
    resources_ = {res: triple_from_values(as_object(values).get(res)) for res in RESOURCES}
    in_values = doc != "env"
    paths: dict[str, YamlPath] = {"parent": (*base, "parentName") if in_values else base}
    for res in RESOURCES:
        for key in ("quota", "limit", "overQuotaWeight"):
            paths[f"{res}.{key}"] = (*base, side, res, key) if in_values else base
    return ExpectedQueue(QueueSpec(name, parent, resources_), doc, paths, QueueOrigin.DEFAULT_QUEUE)


def _queue_files(docs: dict[str, YamlDoc]) -> list[ExpectedQueue]:
    expected = []
    for doc_id, doc in docs.items():
        if not doc_id.startswith("queues:"):
            continue
        spec = queue_spec_from_values(doc.mapping())
        paths: dict[str, YamlPath] = {"parent": ("spec", "parentQueue")}
        for res in RESOURCES:
            for key in ("quota", "limit", "overQuotaWeight"):
                paths[f"{res}.{key}"] = ("spec", "resources", res, key)
        expected.append(ExpectedQueue(spec, doc_id, paths, QueueOrigin.QUEUE_FILE))
    return expected


def _unique_queues(desired: DesiredCluster, queues: list[ExpectedQueue]) -> list[ExpectedQueue]:
    """Two definitions of one Queue in Git would make the plan flip-flop: refuse them."""
    seen: dict[str, ExpectedQueue] = {}
    for queue in queues:
        first = seen.setdefault(queue.spec.name, queue)
        if first is not queue:
            here = desired.locate(queue.doc, ("metadata", "name"))
            there = desired.locate(first.doc, first.paths["parent"])
            raise UserError(
                f"Queue {queue.spec.name} is defined twice (also at {there})",
                where=str(here),
                hint="keep one definition; default queues come from the KAI values",
            )
    return queues


def _expected_shard(desired: DesiredCluster) -> ExpectedShard | None:
    version = parse_version(desired.config.kai_chart_version) or (0, 0, 0)
    values = desired.kai_values_effective
    if version < (0, 10, 0) or as_object(values.get("defaultShard")).get("enabled") is False:
        return None
    scheduler = mapping_at(values, "scheduler")
    strategy = scheduler.get("placementStrategy", "binpack")
    spec: JSONObject = {"placementStrategy": {"gpu": strategy, "cpu": strategy}}
    # Charts before v0.12.14/v0.13.0 have no scheduler.plugins/actions values and render neither.
    chart_scheduler = mapping_at(chart_defaults(desired.defaults_version), "scheduler")
    if scheduler.get("plugins") and "plugins" in chart_scheduler:
        spec["plugins"] = _stringify_arguments(mapping_at(scheduler, "plugins"))
    if scheduler.get("actions") and "actions" in chart_scheduler:
        spec["actions"] = scheduler["actions"]
    doc = desired.kai_values_doc or "env"
    path: YamlPath = ("scheduler",) if desired.kai_values_doc else ("addons", "kaiScheduler", "enabled")
    return ExpectedShard(spec, doc, path)


def _stringify_arguments(plugins: JSONObject) -> JSONObject:
    """The shard CRD types plugin arguments as strings; Helm renders numbers and booleans as text."""
    out: JSONObject = {}
    for name, plugin in plugins.items():
        arguments = plugin.get("arguments") if isinstance(plugin, dict) else None
        if isinstance(plugin, dict) and isinstance(arguments, dict):
            plugin = {**plugin, "arguments": {k: _go_text(v) for k, v in arguments.items()}}
        out[name] = plugin
    return out


def _go_text(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _desired_gates(docs: dict[str, YamlDoc], addons: dict[str, bool]) -> DesiredGates | None:
    env = docs.get("env")
    if env is not None:
        user = _gate_list(env, ENV_GATES_PATH)
        profile = env.get(("observability", "profile"), "compute")
        effective = stack_effective_gates(
            user,
            kai_addon=addons["kaiScheduler"],
            dynamo_addon=addons["dynamoOperator"],
            observability_profile=str(profile),
        )
        return DesiredGates("env", ENV_GATES_PATH, user, effective)
    nvca = docs.get("nvca_values")
    if nvca is not None:
        present = nvca.get(NVCA_GATES_PATH) is not None
        user = _gate_list(nvca, NVCA_GATES_PATH) if present else list(NVCA_CHART_DEFAULT_GATES)
        return DesiredGates("nvca_values", NVCA_GATES_PATH, user, list(user))
    return None


def _gate_list(doc: YamlDoc, path: YamlPath) -> list[str]:
    value = doc.get(path, [])
    if value is None:
        return []
    if isinstance(value, str):  # a comma-joined string is what NVCA itself parses
        from reconciler.model.gates import split_gate_string

        return split_gate_string(value)
    if not _strings(value):
        raise UserError(
            f"{'.'.join(map(str, path))} must be a list of gate names, found {value!r}",
            where=str(doc.locate(path)),
            hint='e.g. ["SelfHosted", "KAIScheduler"]',
        )
    return [item.strip() for item in value]


def _strings(value: JSONValue) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
