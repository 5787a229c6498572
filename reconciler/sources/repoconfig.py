"""`kai-gitops.yaml`: which clusters exist and where their desired configuration lives in Git."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast, overload

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue, as_object, expect_object
from reconciler.core.names import dns_subdomain, label_key, label_value, require
from reconciler.core.refs import YamlPath
from reconciler.model.config import (
    DEFAULT_STACK_KAI_VERSION,
    AuditIdentities,
    ClusterConfig,
    FieldOwnership,
    GitHostConfig,
    IdentityPattern,
    RepoConfig,
    SharedClusterIntent,
    WorkloadConfig,
)
from reconciler.model.rollout import OVERRIDE_LABEL, UNLISTED_WAVE, RolloutConfig, Wave, parse_soak
from reconciler.model.sensitive import SensitiveAllow
from reconciler.yamlio.document import YamlDoc, load_document

if TYPE_CHECKING:
    from jsonschema import ValidationError

CONFIG_FILE = "kai-gitops.yaml"
_UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")


# The shape data/kai-gitops.schema.json gives the file: these types hold once _validate() has passed.
class _SharedCluster(TypedDict):
    intent: Literal["dedicated", "shared"]
    nodes: NotRequired[list[str]]
    nodeSelector: NotRequired[dict[str, str]]


class _Cluster(TypedDict):
    name: str
    mode: str
    kaiChartVersion: str
    kubeContext: NotRequired[str]
    clusterUID: NotRequired[str]
    environmentFile: NotRequired[str]
    stackBaseFile: NotRequired[str]
    stackKaiVersion: NotRequired[str]
    kaiValuesFile: NotRequired[str]
    nvcaValuesFile: NotRequired[str]
    sharedCluster: NotRequired[_SharedCluster]
    queueFiles: NotRequired[list[str]]
    kaiManifestFiles: NotRequired[list[str]]
    customSchedulerPlugins: NotRequired[list[str]]
    customSchedulerActions: NotRequired[list[str]]
    krmFiles: NotRequired[list[str]]
    allowSensitiveWrites: NotRequired[list[_SensitiveAllow]]
    labels: NotRequired[dict[str, str]]


class _SensitiveAllow(TypedDict):
    object: str
    path: str


class _Policies(TypedDict, total=False):
    dirs: list[str]
    data: list[str]


class _GitHost(TypedDict, total=False):
    host: str
    url: str
    repo: str
    labels: list[str]
    assignees: list[str]
    baseBranch: str
    botIdentities: list[str]


# a username pattern, or {"user": pattern, "userAgent": pattern and/or "fieldManager": pattern}
_IdentityEntry = str | dict[str, str]


class _Identities(TypedDict, total=False):
    gitops: list[_IdentityEntry]
    system: list[_IdentityEntry]


class _Audit(TypedDict, total=False):
    identities: _Identities


class _Ownership(TypedDict, total=False):
    controllers: list[str]


class _Wave(TypedDict):
    name: str
    clusters: NotRequired[list[str]]
    selector: NotRequired[dict[str, str]]
    soak: NotRequired[str]


class _Rollout(TypedDict):
    waves: list[_Wave]


class _Workload(TypedDict):
    name: str
    clusters: list[str]
    chart: NotRequired[str]
    values: NotRequired[list[str]]
    manifests: NotRequired[str]


class _RepoConfigFile(TypedDict):
    apiVersion: str
    clusters: list[_Cluster]
    policies: NotRequired[_Policies]
    waiversFile: NotRequired[str]
    gitHost: NotRequired[_GitHost]
    audit: NotRequired[_Audit]
    workloads: NotRequired[list[_Workload]]
    ownership: NotRequired[_Ownership]
    rollout: NotRequired[_Rollout]


def schema() -> JSONObject:
    text = resources.files("reconciler").joinpath("data/kai-gitops.schema.json").read_text()
    parsed: JSONValue = json.loads(text)
    return expect_object(parsed, "kai-gitops.schema.json")


def parse_repo_config(raw: bytes, file: str = CONFIG_FILE) -> RepoConfig:
    doc = load_document(raw, file, empty_ok=False)
    _validate(doc)
    data = cast(_RepoConfigFile, doc.data)  # the schema's shape, checked just above
    clusters = tuple(_cluster(c, i) for i, c in enumerate(data["clusters"]))
    _check_node_names(doc, clusters)
    _unique_names(doc, clusters)
    policies = data.get("policies") or {}
    workloads = tuple(_workload(w, i) for i, w in enumerate(data.get("workloads", ())))
    _check_workloads(doc, workloads, clusters)
    return RepoConfig(
        doc,
        clusters,
        tuple(_repo_path(d) for d in policies.get("dirs", ())),
        tuple(_repo_path(f) for f in policies.get("data", ())),
        _repo_path(data.get("waiversFile")),
        _git_host(data.get("gitHost")),
        _audit_identities(data.get("audit") or {}),
        workloads,
        FieldOwnership(tuple((data.get("ownership") or {}).get("controllers", ()))),
        _rollout(doc, data.get("rollout"), clusters),
    )


def _rollout(doc: YamlDoc, raw: _Rollout | None, clusters: tuple[ClusterConfig, ...]) -> RolloutConfig | None:
    """The waves with their members resolved: a named cluster must be declared, and a cluster may be in one
    wave only (two would give it two places in the order); the clusters no wave names form a last wave."""
    if raw is None:
        return None
    waves = tuple(
        Wave(
            w["name"],
            tuple(w.get("clusters", ())),
            tuple(sorted(w.get("selector", {}).items())),
            parse_soak(w.get("soak", "0s")),
            i,
        )
        for i, w in enumerate(raw["waves"])
    )
    known = {c.name for c in clusters}
    placed: dict[str, Wave] = {}
    members: list[tuple[str, ...]] = []
    for wave in waves:
        if wave.name == UNLISTED_WAVE:
            raise UserError(
                f"rollout wave name '{UNLISTED_WAVE}' is the last wave's, of the clusters no wave names",
                where=str(doc.locate(("rollout", "waves", wave.index, "name"))),
                hint="give this wave another name",
            )
        for i, name in enumerate(wave.clusters):
            if name not in known:
                raise UserError(
                    f"rollout wave '{wave.name}' names cluster '{name}', which clusters does not declare",
                    where=str(doc.locate(("rollout", "waves", wave.index, "clusters", i))),
                    hint="known clusters: " + ", ".join(sorted(known)),
                )
        chosen = tuple(c.name for c in clusters if wave.names(c.name, dict(c.labels)))
        if not chosen:
            # an empty wave would pass at once, and the next wave apply with no canary before it
            raise UserError(
                f"rollout wave '{wave.name}' has no cluster: its selector matches no cluster entry",
                where=str(doc.locate(("rollout", "waves", wave.index))),
                hint="fix the selector or the clusters' labels (a typo in a label empties the wave)",
            )
        for name in chosen:
            if name in placed:
                raise UserError(
                    f"cluster '{name}' is in rollout waves '{placed[name].name}' and '{wave.name}'",
                    where=str(doc.locate(("rollout", "waves", wave.index))),
                    hint="a cluster belongs to one wave: narrow the selector or drop the name",
                )
            placed[name] = wave
        members.append(chosen)
    if len({w.name for w in waves}) != len(waves):
        raise UserError("rollout wave names must be unique", where=str(doc.locate(("rollout", "waves"))))
    rest = tuple(c.name for c in clusters if c.name not in placed)
    if rest:
        waves += (Wave(UNLISTED_WAVE, rest, index=len(waves)),)
        members.append(rest)
    overridden = frozenset(c.name for c in clusters if dict(c.labels).get(OVERRIDE_LABEL) == "true")
    return RolloutConfig(waves, tuple(members), overridden)


def _workload(raw: _Workload, index: int) -> WorkloadConfig:
    return WorkloadConfig(
        raw["name"],
        tuple(raw["clusters"]),
        _repo_path(raw.get("chart")),
        tuple(_repo_path(f) for f in raw.get("values", ())),
        _repo_path(raw.get("manifests")),
        index,
    )


def _check_workloads(doc: YamlDoc, workloads: tuple[WorkloadConfig, ...], clusters: tuple[ClusterConfig, ...]) -> None:
    """Every workload names declared clusters, and no two share a name (findings and waivers name them)."""
    known = {c.name for c in clusters}
    seen: set[str] = set()
    for workload in workloads:
        for i, name in enumerate(workload.clusters):
            if name not in known:
                raise UserError(
                    f"workload '{workload.name}' deploys to cluster '{name}', which clusters does not declare",
                    where=str(doc.locate(("workloads", workload.index, "clusters", i))),
                    hint="known clusters: " + ", ".join(sorted(known)),
                )
        if workload.name in seen:
            raise UserError(
                f"workload name '{workload.name}' is used twice",
                where=str(doc.locate(("workloads", workload.index, "name"))),
                hint="workload names must be unique",
            )
        seen.add(workload.name)
        _no_root_file(doc, workload)


def _no_root_file(doc: YamlDoc, workload: WorkloadConfig) -> None:
    """`chart: .` is a chart at the root, but a file entry that names the root (`manifests: ./`) names no file."""
    keys: list[tuple[str | int, ...]] = [("manifests",)] if workload.manifests == "" else []
    keys += [("values", i) for i, path in enumerate(workload.values) if path == ""]
    if keys:
        raise UserError(
            f"workload '{workload.name}': {keys[0][0]} names the repository root, not a file",
            where=str(doc.locate(("workloads", workload.index, *keys[0]))),
            hint="give the repository path of the file",
        )


def _git_host(raw: _GitHost | None) -> GitHostConfig | None:
    if raw is None:
        return None
    return GitHostConfig(
        raw.get("host"),
        raw.get("url"),
        raw.get("repo"),
        tuple(raw.get("labels", ())),
        tuple(raw.get("assignees", ())),
        raw.get("baseBranch"),
        tuple(raw.get("botIdentities", ())),
    )


def _audit_identities(raw: _Audit) -> AuditIdentities:
    """The file's lists add to the defaults: naming Argo CD must not make kai-gitops's own writes a person's."""
    listed = raw.get("identities") or {}
    defaults = AuditIdentities()
    return AuditIdentities(
        defaults.gitops + tuple(map(_identity, listed.get("gitops", ()))),
        defaults.system + tuple(map(_identity, listed.get("system", ()))),
    )


def _identity(entry: _IdentityEntry) -> IdentityPattern:
    if isinstance(entry, str):
        return IdentityPattern(user=entry)
    return IdentityPattern(
        user=entry["user"], user_agent=entry.get("userAgent"), field_manager=entry.get("fieldManager")
    )


def _validate(doc: YamlDoc) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    # no-untyped-call: jsonschema's extend() carries no annotations
    ecma = extend(Draft202012Validator, {"pattern": _ecma_pattern})  # type: ignore[no-untyped-call]
    validator = ecma(inline_refs(schema()))
    errors = sorted(validator.iter_errors(doc.data), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    if _is_workload_source_error(errors[0]):
        where = ".".join(str(p) for p in errors[0].absolute_path)
        raise UserError(
            f"{where}: give either chart (with optional values) or manifests, not both and not neither",
            where=str(doc.locate(tuple(errors[0].absolute_path))),
            hint="see the JSON Schema: kai-gitops schema",
        )
    first = _most_specific(errors[0])
    path = tuple(first.absolute_path)
    if first.validator == "additionalProperties":  # point at the unknown key itself, not its parent
        path = (*path, sorted(_unknown_keys(first))[0])
    raise UserError(_describe(first), where=str(doc.locate(path)), hint="see the JSON Schema: kai-gitops schema")


def inline_refs(whole: JSONObject) -> JSONObject:
    """The schema with each `{"$ref": "#/$defs/NAME", ...}` replaced by that definition (its annotations kept
    beside it): the same checks and the same errors, without jsonschema resolving a reference for every
    cluster entry (4 a cluster; 0.3 s of a 1,000-cluster file's 0.5 s). A definition that reaches itself keeps
    its reference."""
    defs = as_object(whole.get("$defs"))

    def inline(value: JSONValue, within: tuple[str, ...]) -> JSONValue:
        if isinstance(value, list):
            return [inline(v, within) for v in value]
        if not isinstance(value, dict):
            return value
        ref = value.get("$ref")
        name = ref.removeprefix(_LOCAL_DEF) if isinstance(ref, str) and ref.startswith(_LOCAL_DEF) else None
        if name is None or name not in defs or name in within:
            return {k: inline(v, within) for k, v in value.items()}
        target = as_object(inline(defs[name], (*within, name)))
        return target | {k: v for k, v in value.items() if k != "$ref"}

    return as_object(inline(whole, ()))


_LOCAL_DEF = "#/$defs/"


def _is_workload_source_error(error: ValidationError) -> bool:
    """The workload's oneOf (chart | manifests) failed as a whole: its branches' messages would mislead."""
    path = list(error.absolute_path)
    return error.validator == "oneOf" and len(path) == 2 and path[0] == "workloads"


def _ecma_pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Iterator[ValidationError]:
    """A schema `pattern` is an ECMA-262 regular expression, whose `$` ends the string; Python's `$` also
    matches before a final newline, so `name: "prod\\n"` passed `^[a-z0-9-]+$`. Each unescaped `$` is read as
    Python's `\\Z` (the schema is kai-gitops's own: no `$` sits inside a character class)."""
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not re.search(_UNESCAPED_DOLLAR.sub(r"\\Z", pattern), instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _most_specific(error: ValidationError) -> ValidationError:
    # allOf/if-then wrap the useful message one level down.
    while error.context:
        error = sorted(error.context, key=lambda e: -len(e.absolute_path))[0]
    return error


def _describe(error: ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or "top level"
    if error.validator == "additionalProperties":
        extra = sorted(_unknown_keys(error))
        allowed = ", ".join(sorted(_allowed_keys(error)))
        return f"unknown key(s) {', '.join(map(repr, extra))} in {where}; allowed: {allowed}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    if error.validator in ("enum", "const"):
        return f"{where}: {error.instance!r} is not one of {error.validator_value!r}"
    if error.validator == "minProperties" and where.startswith("audit.identities."):
        return (
            f"{where}: an entry with `user` alone is the username as a string; an object narrows the user with "
            "userAgent and/or fieldManager"
        )
    return f"{where}: {error.message}"


def _unknown_keys(error: ValidationError) -> set[str]:
    """Of an additionalProperties error, whose instance is a mapping and whose schema names its properties."""
    instance = error.instance
    return (set(instance) if isinstance(instance, dict) else set()) - _allowed_keys(error)


def _allowed_keys(error: ValidationError) -> set[str]:
    schema = error.schema
    return set(schema.get("properties", {})) if isinstance(schema, Mapping) else set()


def _cluster(raw: _Cluster, index: int) -> ClusterConfig:
    shared = raw.get("sharedCluster")
    return ClusterConfig(
        name=raw["name"],
        mode=raw["mode"],
        kai_chart_version=_v(raw["kaiChartVersion"]),
        kube_context=raw.get("kubeContext"),
        cluster_uid=raw.get("clusterUID"),
        environment_file=_repo_path(raw.get("environmentFile")),
        stack_base_file=_repo_path(raw.get("stackBaseFile")),
        stack_kai_version=_v(raw.get("stackKaiVersion", DEFAULT_STACK_KAI_VERSION)),
        kai_values_file=_repo_path(raw.get("kaiValuesFile")),
        nvca_values_file=_repo_path(raw.get("nvcaValuesFile")),
        shared_cluster=SharedClusterIntent(shared["intent"], tuple(shared.get("nodes", ())), shared.get("nodeSelector"))
        if shared
        else SharedClusterIntent(),
        queue_files=tuple(_repo_path(f) for f in raw.get("queueFiles", ())),
        kai_manifest_files=tuple(_repo_path(f) for f in raw.get("kaiManifestFiles", ())),
        index=index,
        krm_files=tuple(_repo_path(f) for f in raw.get("krmFiles", ())),
        allow_sensitive_writes=tuple(_sensitive_allow(a) for a in raw.get("allowSensitiveWrites", ())),
        custom_scheduler_plugins=tuple(raw.get("customSchedulerPlugins", ())),
        custom_scheduler_actions=tuple(raw.get("customSchedulerActions", ())),
        labels=tuple(sorted(raw.get("labels", {}).items())),
    )


def _sensitive_allow(raw: _SensitiveAllow) -> SensitiveAllow:
    kind, name = raw["object"].split("/", 1)  # the schema's pattern: Kind/name
    return SensitiveAllow(kind, name, tuple(raw["path"].split(".")))


@overload
def _repo_path(path: str) -> str: ...
@overload
def _repo_path(path: str | None) -> str | None: ...


def _repo_path(path: str | None) -> str | None:
    """`./clusters//a.yaml` as Git names it, `clusters/a.yaml`: findings carry the path into SARIF URIs,
    annotations and Code Quality, which match it against the repository's files and the PR's diff."""
    if not isinstance(path, str):
        return path
    return "/".join(part for part in path.replace("\\", "/").split("/") if part not in ("", "."))


def _v(version: str) -> str:
    return version if version.startswith("v") else f"v{version}"


def _check_node_names(doc: YamlDoc, clusters: tuple[ClusterConfig, ...]) -> None:
    """sharedCluster's node names and node labels as Kubernetes allows them: they end up in kubectl
    commands and label patches (the cluster names' own rule is the schema's)."""
    for cluster in clusters:
        shared: YamlPath = ("clusters", cluster.index, "sharedCluster")
        for i, node in enumerate(cluster.shared_cluster.nodes):
            require(dns_subdomain, node, "node name", str(doc.locate((*shared, "nodes", i))))
        for key, value in (cluster.shared_cluster.node_selector or {}).items():
            where = str(doc.locate((*shared, "nodeSelector", key)))
            require(label_key, key, "node label key", where)
            require(label_value, value, "node label value", where)
        for key, value in cluster.labels:  # Kubernetes' label rules, so a selector reads as people expect
            where = str(doc.locate(("clusters", cluster.index, "labels", key)))
            require(label_key, key, "cluster label key", where)
            require(label_value, value, "cluster label value", where)


def _unique_names(doc: YamlDoc, clusters: tuple[ClusterConfig, ...]) -> None:
    seen: dict[str, int] = {}
    for cluster in clusters:
        if cluster.name in seen:
            raise UserError(
                f"cluster name '{cluster.name}' is used twice",
                where=str(doc.locate(("clusters", cluster.index, "name"))),
                hint="cluster names must be unique",
            )
        seen[cluster.name] = cluster.index
