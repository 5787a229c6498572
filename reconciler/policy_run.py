"""Glue for the pipeline: the repo's policy settings, the engine the run asks for, results as Findings.

User policy dirs and data files are repo-relative (kai-gitops.yaml `policies:`) and read from the same
Git ref as the rest of the desired state. Waivers are not applied here: they cover drift findings too,
so the caller applies `apply_repo_waivers` to each cluster's whole list, collecting the waivers used, and
after the last cluster adds `repo_waiver_findings` once (expired and unused waivers are repo facts):

    used: set[int] = set()
    for cluster ...:
        findings = apply_repo_waivers(findings, repo, cluster, today, used=used)
    repository += repo_waiver_findings(repo, used, today)
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Collection, Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler.checks.policy.engine import PolicyEngine, load_policy_set, make_engine, merge_into
from reconciler.checks.policy.to_findings import results_to_findings
from reconciler.checks.policy.waivers import WAIVERS_FILE, Waiver, apply_waivers, load_waivers, waiver_findings
from reconciler.errors import UserError
from reconciler.findings import Finding
from reconciler.yamldoc import load_document

if TYPE_CHECKING:  # the pipeline imports this module lazily; these are only its types
    from reconciler.model.desired import DesiredCluster
    from reconciler.pipeline import DesiredRepo, PolicySettings, RunSettings
    from reconciler.sources.git import GitTree

_ENGINES: dict[str, PolicyEngine] = {}  # one compiled pack per distinct policy input within a process


def evaluate(facts: dict[str, Any], desired: DesiredCluster | None, repo: DesiredRepo | None,
             settings: RunSettings) -> list[Finding]:
    """Policy findings for one cluster. `desired`/`repo` may be None (doctor on a snapshot)."""
    engine = engine_for(repo, settings.policy)
    locate = desired.locate if desired is not None else (lambda doc, path: None)
    return results_to_findings(engine.evaluate(facts), str(facts.get("cluster", "")), locate)


def engine_for(repo: DesiredRepo | None, policy: PolicySettings) -> PolicyEngine:
    files = repo_policy_files(repo) if repo is not None else {}
    data = repo_policy_data(repo) if repo is not None else {}
    key = json.dumps([sorted(files.items()), data, policy.opa_url, policy.opa_token, str(policy.opa_ca),
                      policy.opa_timeout, policy.opa_preloaded], default=str)
    if key not in _ENGINES:
        with tempfile.TemporaryDirectory(prefix="kai-gitops-policies-") as tmp:
            dirs, data_files = materialise(Path(tmp), files, data)
            policy_set = load_policy_set(dirs, data_files)  # reads every file now; tmp may then go
        _ENGINES[key] = make_engine(policy_set, opa_url=policy.opa_url, opa_token=policy.opa_token,
                                    opa_ca=policy.opa_ca, opa_timeout=policy.opa_timeout,
                                    opa_preloaded=policy.opa_preloaded)
    return _ENGINES[key]


def materialise(tmp: Path, files: dict[str, str], data: dict[str, Any]) -> tuple[list[Any], list[Path]]:
    """Write repo files to disk so errors still name them repo-relative (e.g. policies/acme/x.rego)."""
    for rel, text in files.items():
        (tmp / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "repo" / rel).write_text(text)
    dirs = [(tmp / "repo" / top, top) for top in sorted({rel.split("/")[0] for rel in files})]
    data_files = []
    if data:
        (tmp / "data.json").write_text(json.dumps({"user": data}))
        data_files.append(tmp / "data.json")
    return dirs, data_files


def repo_policy_files(repo: DesiredRepo) -> dict[str, str]:
    files: dict[str, str] = {}
    for top in repo.config.policy_dirs:
        found = dict(walk_rego(repo.tree, top.strip("/")))
        if not found:
            raise UserError("policy directory has no .rego files at this ref", where=top,
                            hint="check policies.dirs in kai-gitops.yaml")
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


def repo_waivers(repo: DesiredRepo) -> list[Waiver]:
    """The repo's waivers file (kai-gitops.yaml `waiversFile`, default kai-gitops-waivers.yaml), or none."""
    if repo is None:
        return []
    name = repo.config.waivers_file or WAIVERS_FILE
    if not repo.tree.exists(name):
        return []
    return load_waivers(repo.tree.read(name), name)  # bytes: non-UTF-8 is a one-line file:line error


def apply_repo_waivers(findings: list[Finding], repo: DesiredRepo | None, cluster: str, today: date | None = None, *,
                       used: set[int] | None = None) -> list[Finding]:
    """One cluster's findings with the repo's waivers applied. The indexes of the waivers that matched
    are added to `used`; pass the same set for every cluster of the run, then to `repo_waiver_findings`."""
    waivers = repo_waivers(repo)
    if not waivers:
        return findings
    out, matched = apply_waivers(findings, waivers, today or date.today(), cluster=cluster)
    if used is not None:
        used |= matched
    return out


def repo_waiver_findings(repo: DesiredRepo, used: Collection[int], today: date | None = None, *,
                         clusters: Collection[str] | None = None) -> list[Finding]:
    """Once per run, after every cluster: KAI-W-001 per expired waiver, KAI-W-002 per waiver no cluster used.

    `clusters`: the clusters the run checked when it did not check all of them (`--cluster`), so a waiver
    scoped to an unchecked cluster is not called unused. Findings have cluster "(repository)".
    """
    return waiver_findings(repo_waivers(repo), used, today or date.today(), clusters=clusters)
