"""The policy pack's types: results, policy files, the facts contract, and result collection.

Shared by both engines and by the module that picks one (engine.py), so neither imports the other.

Every rule is a Rego package under `kai_gitops.rules` that defines `meta` (plain data, because regorus
has no `rego.metadata`) and a partial set `violations`. One query of `data.kai_gitops.rules` evaluates
them all; `collect_results` turns that document into typed results for either engine. A rule's `meta`
becomes the `RuleMeta` every rule has (findings/rules.py).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONLike, JSONObject, JSONValue
from reconciler.core.refs import ObjectRef
from reconciler.findings.rules import META_KEYS, SCOPES, RuleMeta, Scope

if TYPE_CHECKING:
    from reconciler.checks.policy.owned import OwnedEngine

RULES_PACKAGE = "kai_gitops.rules"
# How shipped files are named in messages: never the same as a repo path, even a repo dir called policies/.
SHIPPED_LABEL = "kai-gitops:policies"
RULES_QUERY = f"data.{RULES_PACKAGE}"

_PACKAGE_RE = re.compile(r"^\s*package\s+([A-Za-z_][\w.]*)", re.MULTILINE)
_META_RE = re.compile(r"^meta\s*(:=|=)", re.MULTILINE)
_VIOLATIONS_RE = re.compile(r"^violations\b", re.MULTILINE)

YamlPath = tuple[str | int, ...]


@dataclass(frozen=True)
class PolicyResult:
    rule: RuleMeta
    message: str
    subject: ObjectRef | None
    doc: str | None
    path: YamlPath | None
    fix: str | None
    remediation: str | None = None  # this violation's own remedy, when the rule's meta covers several cases

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.rule.id, str(self.subject or ""), str(self.path or ""), self.message)


@dataclass(frozen=True)
class PolicyFile:
    name: str  # shown in errors: "policies/kai_gitops/rules/x.rego" or the user's own path
    path: Path
    text: str
    package: str


@dataclass(frozen=True)
class StaticAnswer:
    """A query whose answer maps each static rule's package to its violations, and each package's rule id.

    `whole` is a rule with the same answer, read without parsing a query; it is undefined when one package's
    violations is (a complete `violations` rule whose body fails), and then `query` answers."""

    query: str
    rules: dict[str, str]  # package -> rule id
    whole: str


@dataclass(frozen=True)
class PolicySet:
    files: tuple[PolicyFile, ...]
    data: JSONObject
    rules: dict[str, RuleMeta]  # rule id -> meta
    rule_files: dict[str, str]  # rule id -> file name
    # the prepared pack, for the embedded engine (an OPA server compiles what it is sent)
    compiled: OwnedEngine | None = field(default=None, compare=False, repr=False)
    # the embedded engine's query for only the static rules' violations (regorus_engine.py), if it has one
    static_answer: StaticAnswer | None = field(default=None, compare=False, repr=False)

    def file_of(self, rule_id: str) -> str:
        return self.rule_files.get(rule_id, "<unknown file>")


class PolicyEngine(Protocol):
    def evaluate(self, facts: Mapping[str, JSONLike]) -> list[PolicyResult]: ...


def shipped_policy_dir() -> Path:
    import policies

    return Path(policies.__file__).resolve().parent


def shipped_data_files() -> list[Path]:
    return sorted((shipped_policy_dir() / "kai_gitops" / "data").glob("*.json"))


PolicyDir = Path | tuple[Path, str]  # a directory, or (directory, the name to show for it in messages)


def collect_policy_files(roots: list[tuple[Path, str]], *, tests: bool) -> list[PolicyFile]:
    """Rego files under each root (tests only or non-tests only), each file once even if roots overlap."""
    seen: set[Path] = set()
    files: list[PolicyFile] = []
    for root, shown in roots:
        if not root.is_dir():
            raise UserError(f"policy directory {shown} does not exist")
        for path in sorted(root.rglob("*.rego")):
            if path.name.endswith("_test.rego") != tests or path.resolve() in seen:
                continue
            seen.add(path.resolve())
            name = f"{shown.rstrip('/')}/{path.relative_to(root).as_posix()}"
            files.append(read_policy_file(path, name))
    return files


def read_policy_file(path: Path, name: str) -> PolicyFile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read policy file: {exc}", where=name) from None
    match = _PACKAGE_RE.search(text)
    if not match:
        raise UserError("no `package` declaration", where=f"{name}:1:1")
    return PolicyFile(name, path, text, match.group(1))


def merge_data_files(paths: list[Path]) -> JSONObject:
    merged: JSONObject = {}
    origin: dict[tuple[str, ...], str] = {}
    for path in paths:
        merge_into(merged, load_json_object(path), (), origin, display_name(path))
    return merged


def display_name(path: Path) -> str:
    """Shipped files are shown as policies/...; the user's as they named them."""
    try:
        return f"policies/{path.resolve().relative_to(shipped_policy_dir()).as_posix()}"
    except ValueError:
        return str(path)


def load_json_object(path: Path) -> JSONObject:
    try:
        value: JSONValue = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read data file: {exc.strerror}", where=display_name(path)) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", where=f"{display_name(path)}:{exc.lineno}:{exc.colno}") from None
    if not isinstance(value, dict):
        raise UserError("a policy data file must hold a JSON object (merged at `data`)", where=display_name(path))
    return value


def merge_into(
    target: JSONObject, new: JSONObject, prefix: tuple[str, ...], origin: dict[tuple[str, ...], str], name: str
) -> None:
    for key, value in new.items():
        here = (*prefix, key)
        present = target.get(key)
        if isinstance(value, dict) and isinstance(present, dict):
            merge_into(present, value, here, origin, name)
        elif key in target and target[key] != value:
            owner = next(origin[here[:n]] for n in range(len(here), 0, -1) if here[:n] in origin)
            raise UserError(f"data.{'.'.join(here)} is also set by {owner} with a different value", where=name)
        else:
            target[key] = value
            origin[here] = name


def is_rule_package(package: str) -> bool:
    return package == RULES_PACKAGE or package.startswith(RULES_PACKAGE + ".")


def check_duplicate_meta(files: list[PolicyFile]) -> None:
    """Two files of one package both defining `meta` would collide inside Rego with a vaguer message."""
    first: dict[str, str] = {}
    for f in files:
        if not is_rule_package(f.package) or not _META_RE.search(f.text):
            continue
        if f.package in first:
            raise UserError(f"package {f.package} defines `meta` in two files: {first[f.package]} and {f.name}")
        first[f.package] = f.name


def index_rules(files: list[PolicyFile], metas: dict[str, JSONValue]) -> tuple[dict[str, RuleMeta], dict[str, str]]:
    rules: dict[str, RuleMeta] = {}
    rule_files: dict[str, str] = {}
    for f in files:
        if not is_rule_package(f.package):
            continue
        raw = metas.get(f.package)
        if raw is None:
            if _VIOLATIONS_RE.search(f.text):
                raise UserError(f"package {f.package} defines `violations` but no `meta`", where=f.name)
            continue
        if not _META_RE.search(f.text):
            continue  # meta lives in another file of the same package
        meta = RuleMeta.from_dict(raw, f.name)
        if meta.id in rules:
            raise UserError(f"rule id {meta.id} is defined twice: {rule_files[meta.id]} and {f.name}")
        rules[meta.id], rule_files[meta.id] = meta, f.name
    return rules, rule_files


# Containers the rules iterate over. regorus stops the whole evaluation on `some x in null`, so a
# contract breach is caught here with a clear line instead. (path, type, may be null)
_SHAPE: tuple[tuple[str, type, bool], ...] = (
    ("desired", dict, False),
    ("desired.docs", dict, False),
    ("desired.addons", dict, False),
    ("desired.kai_values_user", dict, False),
    ("desired.kai_values_effective", dict, False),
    ("desired.gates", dict, False),
    ("desired.gates.user", list, False),
    ("desired.gates.effective", list, False),
    ("desired.gates.enabled", list, False),
    ("desired.gates.disabled", list, False),
    ("desired.shared_cluster", dict, False),
    ("desired.shared_cluster.nodes", list, False),
    ("desired.shared_cluster.selector", dict, True),
    ("desired.extra_queues", list, False),
    ("desired.kai_chart", dict, False),
    ("desired.kai_chart.sections", list, False),
    ("desired.kai_manifests", list, False),
    ("live", dict, False),
    ("live.crds", dict, False),
    ("live.queues", list, False),
    ("live.nvca_prediction", dict, True),
    ("live.nvca_prediction.errors", list, False),
    ("live.healthz", dict, True),
    ("live.healthz.errors", list, False),
    ("live.releases", list, False),
    ("live.release_errors", list, False),
    ("live.release_search", dict, False),
    ("live.release_search.namespaces", list, False),
    ("live.gate_hops", dict, False),
    ("live.gate_hops.configmap", list, True),
    ("live.gate_hops.spec", list, True),
    ("live.gate_hops.overrides", list, True),
    ("live.gate_hops.status", list, True),
    ("live.backend", dict, False),
    ("live.nodes", dict, False),
    ("live.nodes.schedule_label", list, False),
    ("live.nodes.schedule_true", list, False),
    ("live.nodes.selector_matches", list, True),
    ("live.nvcf_pods", dict, False),
    ("live.nvcf_pods.queues_used", list, False),
    ("live.nvcf_pods.not_on_kai", list, False),
    ("live.nvcf_pods.missing_queue_label", list, False),
    ("live.nvcf_pods.pending", list, False),
    ("live.kai_pods", list, False),
)


def facts_scope(facts: Mapping[str, JSONLike]) -> str:
    """The evaluation scope, after checking the facts document's containers (policies/FACTS.md)."""
    scope = facts.get("scope")
    if scope not in SCOPES:
        raise UserError(f"facts document has scope {scope!r}; expected 'static' or 'live'")
    for dotted, kind, nullable in _SHAPE:
        found, value = lookup(facts, dotted)
        if found and not isinstance(value, kind) and not (nullable and value is None):
            raise UserError(
                f"facts document: {dotted} must be a {'list' if kind is list else 'mapping'}"
                f"{' or null' if nullable else ''}, got {type(value).__name__} (see policies/FACTS.md)"
            )
    check_live_queues(facts)
    return str(scope)


QUEUE_FIELDS = ("quota", "limit", "overQuotaWeight")


def check_live_queues(facts: Mapping[str, JSONLike]) -> None:
    """The rules read queue numbers directly (it keeps 1,000 queues fast), so all nine must be there."""
    found, queues = lookup(facts, "live.queues")  # a list: facts_scope checked the containers first
    for i, q in enumerate(queues if found and isinstance(queues, list) else []):
        resources = q.get("resources") if isinstance(q, dict) else None
        complete = isinstance(resources, dict) and all(
            _numbers_complete(resources.get(k)) for k in ("cpu", "gpu", "memory")
        )
        if not complete or not isinstance(q.get("name"), str):
            raise UserError(
                f"facts document: live.queues[{i}] needs a name and resources.{{cpu,gpu,memory}}."
                "{quota,limit,overQuotaWeight} numbers (absent = 0) (see policies/FACTS.md)"
            )


def _numbers_complete(resource: JSONLike) -> bool:
    return isinstance(resource, dict) and all(isinstance(resource.get(f), int | float) for f in QUEUE_FIELDS)


def lookup(doc: Mapping[str, JSONLike], dotted: str) -> tuple[bool, JSONLike]:
    node: JSONLike = doc
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
    return True, node


def collect_results(tree: object, policy_set: PolicySet, scope: str) -> list[PolicyResult]:
    """Results of every rule found in the evaluated `data.kai_gitops.rules` document, for one scope."""
    results: list[PolicyResult] = []
    for meta_raw, violations in iter_rule_nodes(tree):
        rule_id = str(meta_raw.get("id")) if isinstance(meta_raw, dict) else None
        where = policy_set.file_of(rule_id) if rule_id is not None else "<rule>"
        known = policy_set.rules.get(rule_id) if rule_id is not None else None
        meta = known if known is not None and _declared(meta_raw, known) else _rule_meta(meta_raw, where)
        if scope == Scope.STATIC and meta.scope is not Scope.STATIC:
            continue
        results.extend(to_result(meta, v, where) for v in violations)
    return sorted(results, key=PolicyResult.sort_key)


def collect_static_results(answer: object, policy_set: PolicySet, static: StaticAnswer) -> list[PolicyResult]:
    """Results from the static answer (package -> violations): the rules' meta is the pack's, read at load."""
    results: list[PolicyResult] = []
    for package, violations in sorted(answer.items()) if isinstance(answer, dict) else ():
        rule_id = static.rules[package]
        meta, where = policy_set.rules[rule_id], policy_set.file_of(rule_id)
        results.extend(
            to_result(meta, v, where) for v in (violations if isinstance(violations, list) else [violations])
        )
    return sorted(results, key=PolicyResult.sort_key)


def _declared(raw: object, known: RuleMeta) -> bool:
    """Whether `raw` is the meta the pack declared for its rule (checked when the pack was loaded)."""
    return isinstance(raw, dict) and tuple(map(raw.get, META_KEYS)) == _meta_fields(known)


@functools.lru_cache(maxsize=1024)
def _meta_fields(known: RuleMeta) -> tuple[object, ...]:
    """The pack's meta as a tuple, made once: every cluster's answer is compared with it (74 rules a cluster)."""
    return tuple(getattr(known, k) for k in META_KEYS)


@functools.lru_cache(maxsize=1024)
def _checked_meta(where: str, fields: tuple[object, ...]) -> RuleMeta:
    return RuleMeta.from_dict(dict(zip(META_KEYS, fields, strict=True)), where)


def _rule_meta(raw: object, where: str) -> RuleMeta:
    """The rule's metadata, checked once per distinct meta: every cluster's evaluation returns every rule's (a fleet
    of 1,000 clusters checked the same 73 metas 1,000 times)."""
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in META_KEYS):
        return RuleMeta.from_dict(raw, where)  # the error it raises (from_dict reads the META_KEYS only)
    return _checked_meta(where, tuple(raw[k] for k in META_KEYS))


def iter_rule_nodes(tree: object) -> list[tuple[object, list[object]]]:
    if not isinstance(tree, dict):
        return []
    if "meta" in tree and "violations" in tree:
        violations = tree["violations"]
        return [(tree["meta"], violations if isinstance(violations, list) else [violations])]
    nodes: list[tuple[object, list[object]]] = []
    for key in sorted(tree):
        nodes.extend(iter_rule_nodes(tree[key]))
    return nodes


def to_result(meta: RuleMeta, raw: object, where: str) -> PolicyResult:
    if not isinstance(raw, dict) or not isinstance(raw.get("message"), str):
        raise UserError(f"rule {meta.id}: a violation must be an object with a string `message`", where=where)
    return PolicyResult(
        meta,
        raw["message"],
        to_subject(raw.get("subject"), meta, where),
        optional_str(raw, "doc", meta, where),
        to_path(raw.get("path"), meta, where),
        optional_str(raw, "fix", meta, where) or None,
        optional_str(raw, "remediation", meta, where) or None,
    )


def optional_str(raw: Mapping[str, object], key: str, meta: RuleMeta, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise UserError(f"rule {meta.id}: violation `{key}` must be a string or null", where=where)
    return value


def to_subject(raw: object, meta: RuleMeta, where: str) -> ObjectRef | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("apiVersion", "kind", "name")):
        raise UserError(f"rule {meta.id}: violation `subject` needs string apiVersion, kind and name", where=where)
    namespace = raw.get("namespace")
    return ObjectRef(raw["apiVersion"], raw["kind"], raw["name"], namespace if isinstance(namespace, str) else None)


def to_path(raw: object, meta: RuleMeta, where: str) -> YamlPath | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(p, str | int) and not isinstance(p, bool) for p in raw):
        raise UserError(f"rule {meta.id}: violation `path` must be a list of keys and indexes", where=where)
    return tuple(raw)
