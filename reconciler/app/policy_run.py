"""Glue for the pipeline: the repo's policies, policy data and waivers at a ref, and the engine a run asks for.

User policy dirs and data files are repo-relative (kai-gitops.yaml `policies:`) and read from the same
Git ref as the rest of the desired state. Waivers are loaded here and applied by the pipeline, because they
cover drift findings too and are judged (expired, unused) once per run, not per cluster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler.checks.git_edits import attach_git_edits
from reconciler.checks.policy.budget import RegoBudget
from reconciler.checks.policy.engine import load_policy_set, make_engine
from reconciler.checks.policy.pack import PolicyEngine, merge_into
from reconciler.checks.policy.to_findings import results_to_findings
from reconciler.checks.policy.waivers import WAIVERS_FILE, Waiver, load_waivers
from reconciler.core.errors import UserError
from reconciler.findings.finding import Finding
from reconciler.findings.rules import RuleMeta, Scope
from reconciler.sources.materialize import WorkArea
from reconciler.yamlio.document import load_document

if TYPE_CHECKING:  # only types
    from reconciler.app.settings import DesiredRepo, PolicySettings, RunSettings
    from reconciler.model.desired import DesiredCluster
    from reconciler.sources.git import GitTree

_ENGINES: dict[str, PolicyEngine] = {}  # one compiled pack per distinct policy input within a process
_RULES: dict[str, dict[str, RuleMeta]] = {}  # and the rules it holds, for reports that list what ran


def evaluate(
    facts: dict[str, Any], desired: DesiredCluster | None, repo: DesiredRepo | None, settings: RunSettings
) -> list[Finding]:
    """Policy findings for one cluster. `desired`/`repo` may be None (doctor on a snapshot)."""
    engine = engine_for(repo, settings.policy)
    locate = desired.locate if desired is not None else (lambda doc, path: None)
    findings = results_to_findings(engine.evaluate(facts), str(facts.get("cluster", "")), locate)
    return attach_git_edits(findings, desired)


def evaluated_rules(repo: DesiredRepo | None, policy: PolicySettings, scope: str) -> list[RuleMeta]:
    """The policy rules an evaluation in `scope` runs (a static one skips live rules), sorted by id.

    Call it once per run: it reads the repo's policy inputs to find (or build) the compiled pack.
    """
    rules = _compiled(repo, policy)[1]
    return sorted((m for m in rules.values() if scope == Scope.LIVE or m.scope is Scope.STATIC), key=lambda m: m.id)


def engine_for(repo: DesiredRepo | None, policy: PolicySettings) -> PolicyEngine:
    return _compiled(repo, policy)[0]


def _compiled(repo: DesiredRepo | None, policy: PolicySettings) -> tuple[PolicyEngine, dict[str, RuleMeta]]:
    files = repo_policy_files(repo) if repo is not None else {}
    data = repo_policy_data(repo) if repo is not None else {}
    budget = _budget(policy, files)
    key = json.dumps(
        [
            sorted(files.items()),
            data,
            policy.opa_url,
            policy.opa_token,
            str(policy.opa_ca),
            policy.opa_timeout,
            policy.opa_preloaded,
            budget,
        ],
        default=str,
    )
    if key not in _ENGINES:
        with WorkArea("policies") as work:
            dirs, data_files = materialise(work, files, data)
            policy_set = load_policy_set(dirs, data_files, budget=budget)  # reads every file now; the area may go
        _RULES[key] = policy_set.rules
        _ENGINES[key] = make_engine(
            policy_set,
            opa_url=policy.opa_url,
            opa_token=policy.opa_token,
            opa_ca=policy.opa_ca,
            opa_timeout=policy.opa_timeout,
            opa_preloaded=policy.opa_preloaded,
            budget=budget,
        )
    return _ENGINES[key], _RULES[key]


def _budget(policy: PolicySettings, files: dict[str, str]) -> RegoBudget | None:
    """A budget when the repo's own Rego is untrusted and there is some; an OPA server has its own timeout."""
    if not policy.untrusted or not files or policy.opa_url:
        return None
    return RegoBudget(policy.timeout_s, policy.memory_mb, tuple(sorted(files)))


def materialise(work: WorkArea, files: dict[str, str], data: dict[str, Any]) -> tuple[list[Any], list[Path]]:
    """Write repo files into the work area so errors still name them repo-relative (e.g. policies/acme/x.rego)."""
    for rel, text in files.items():
        work.write(f"repo/{rel}", text.encode("utf-8"), shown=rel)
    dirs = [(work.path(f"repo/{top}"), top) for top in sorted({rel.split("/")[0] for rel in files})]
    data_files = []
    if data:
        data_files.append(work.write("data.json", json.dumps({"user": data}).encode("utf-8"), shown="policies.data"))
    return dirs, data_files


def repo_policy_files(repo: DesiredRepo) -> dict[str, str]:
    files: dict[str, str] = {}
    for top in repo.config.policy_dirs:
        found = dict(walk_rego(repo.tree, top.strip("/")))
        if not found:
            raise UserError(
                "policy directory has no .rego files at this ref",
                where=top,
                hint="check policies.dirs in kai-gitops.yaml",
            )
        files.update(found)
    return files


def walk_rego(tree: GitTree, top: str) -> Iterator[tuple[str, str]]:
    """Every .rego file under `top`, from the working tree or from the commit's tree."""
    for path, data in tree.iter_files(top, suffix=".rego"):
        try:
            yield path, data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError("policy file is not valid UTF-8", where=path, hint="save it as UTF-8") from None


def repo_policy_data(repo: DesiredRepo) -> dict[str, Any]:
    """policies.data files (JSON or YAML mappings), merged under data.user as the repo schema promises.

    Merged like the engine merges data files: nested mappings combine, and a key two files set to
    different values is refused, naming both files (never a silent last-one-wins).
    """
    merged: dict[str, Any] = {}
    origin: dict[tuple[str, ...], str] = {}
    for rel in repo.config.policy_data:
        value = load_document(repo.tree.read(rel), rel).data  # JSON is YAML: one reader, file:line errors
        if not isinstance(value, dict):
            raise UserError("policy data file must hold a mapping", where=f"{rel}:1")
        merge_into(merged, value, ("user",), origin, rel)
    return merged


def repo_waivers(repo: DesiredRepo | None) -> list[Waiver]:
    """The repo's waivers file (kai-gitops.yaml `waiversFile`, default kai-gitops-waivers.yaml), or none."""
    if repo is None:
        return []
    name = repo.config.waivers_file or WAIVERS_FILE
    # Named in kai-gitops.yaml: it must be there. The default name is optional.
    text = repo.tree.read(name) if repo.config.waivers_file else repo.tree.read_optional(name)
    return [] if text is None else load_waivers(text, name)  # bytes: non-UTF-8 is a one-line file:line error
