"""The pipeline glue: repo policy dirs/data read at the Git ref, engine choice, waivers over all findings."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import SimpleNamespace

import pytest

from reconciler.app import policy_run as runner
from reconciler.app.evaluate import Waiving
from reconciler.core.errors import UserError
from reconciler.sources.git import open_tree
from tests.support.policy_run import DATA_RULE
from tests.support.policy_shared import USER_RULE, ZERO, example


@dataclass
class Config:
    policy_dirs: tuple[str, ...] = ("policies",)
    policy_data: tuple[str, ...] = ("budget.yaml",)
    waivers_file: str | None = None


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.fixture()
def repo_dir(tmp_path: Path) -> Path:
    root = tmp_path / "gitops"
    (root / "policies" / "acme").mkdir(parents=True)
    (root / "policies" / "acme" / "names.rego").write_text(USER_RULE)
    (root / "policies" / "acme" / "budget.rego").write_text(DATA_RULE)
    (root / "budget.yaml").write_text("budget:\n  max_queues: 2\n")
    (root / "kai-gitops-waivers.yaml").write_text(
        "- rule: ACME-*\n  subject: '*'\n  reason: migration\n  owner: acme\n  expires: 2030-01-01\n"
    )
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "policies")
    return root


def settings() -> SimpleNamespace:
    return SimpleNamespace(
        policy=SimpleNamespace(
            opa_url=None, opa_token=None, opa_ca=None, opa_timeout=10.0, opa_preloaded=False, untrusted=False
        )
    )


def facts() -> dict:
    f = example("facts-live.json")
    f["live"]["queues"].append({"name": "research", "parent": None, "has_resources": True, "resources": ZERO})
    return f


@pytest.mark.parametrize("worktree", [False, True])
def test_repo_policies_and_data_are_read_at_the_ref(repo_dir: Path, worktree: bool) -> None:
    repo = SimpleNamespace(tree=open_tree(str(repo_dir), worktree=worktree), config=Config())
    found = runner.evaluate(facts(), None, repo, settings())
    ids = {f.rule_id for f in found}
    assert {"ACME-Q-001", "ACME-B-001", "NVCA-H-002"} <= ids
    assert next(f for f in found if f.rule_id == "ACME-B-001").message == "4 queues"


def test_repo_policy_errors_name_repo_relative_files(repo_dir: Path) -> None:
    (repo_dir / "policies" / "acme" / "names.rego").write_text("package kai_gitops.rules.user.x\n\nmeta := {\n")
    repo = SimpleNamespace(tree=open_tree(str(repo_dir), worktree=True), config=Config())
    with pytest.raises(UserError) as err:
        runner.evaluate(facts(), None, repo, settings())
    assert err.value.line().startswith("policies/acme/names.rego:")


def test_missing_policy_dir_is_reported(repo_dir: Path) -> None:
    repo = SimpleNamespace(tree=open_tree(str(repo_dir)), config=Config(policy_dirs=("nope",)))
    with pytest.raises(UserError) as err:
        runner.evaluate(facts(), None, repo, settings())
    assert err.value.line().startswith("nope: policy directory has no .rego files")


def test_without_repo_only_the_shipped_pack_runs() -> None:
    found = runner.evaluate(facts(), None, None, settings())
    assert found and not any(f.rule_id.startswith("ACME") for f in found)


def test_doctor_without_git_skips_rules_that_need_intent() -> None:
    f = example("facts-live.json")
    del f["desired"]
    f["live"]["nodes"]["schedule_true"] = ["gpu-node-01"]
    ids = {x.rule_id for x in runner.evaluate(f, None, None, settings())}
    assert "NVCA-H-002" in ids
    assert ids.isdisjoint({"NVCA-G-010", "NVCA-S-010", "NVCA-S-011", "NVCA-S-013", "KAI-R-012"})


def waiving(repo: object, clusters: list[str], today: date) -> Waiving:
    run = Waiving(repo, clusters)  # type: ignore[arg-type]
    run.today = today
    return run


def test_repo_waivers_apply_to_the_given_findings(repo_dir: Path) -> None:
    repo = SimpleNamespace(tree=open_tree(str(repo_dir)), config=Config())
    run = waiving(repo, ["prod-addon"], date(2026, 11, 1))
    found = run.apply(runner.evaluate(facts(), None, repo, settings()), "prod-addon")
    assert all(f.waived_by for f in found if f.rule_id.startswith("ACME-"))
    assert not any(f.waived_by for f in found if f.rule_id.startswith("NVCA-"))
    assert not any(f.rule_id.startswith("KAI-W-") for f in found)
    assert run.used == {0}
    assert run.leftovers() == []
    assert waiving(None, ["x"], date(2026, 11, 1)).apply([], "x") == []
    assert waiving(None, [], date(2026, 11, 1)).leftovers() == []


def test_repo_waivers_are_judged_once_per_run(repo_dir: Path) -> None:
    """Two clusters, one global waiver used only in the first: no KAI-W-002; expired: one KAI-W-001."""
    (repo_dir / "kai-gitops-waivers.yaml").write_text(
        "- rule: ACME-*\n  subject: '*'\n  reason: migration\n  owner: acme\n  expires: 2030-01-01\n"
        "- rule: NVCA-H-*\n  subject: '*'\n  reason: old\n  owner: acme\n  expires: 2020-01-01\n"
    )
    repo = SimpleNamespace(tree=open_tree(str(repo_dir), worktree=True), config=Config())
    run = waiving(repo, ["a", "b"], date(2026, 11, 1))
    first = run.apply(runner.evaluate(facts(), None, repo, settings()), "a")
    second = run.apply([], "b")
    assert second == [] and any(f.waived_by for f in first)
    assert [(f.rule_id, str(f.location), f.cluster) for f in run.leftovers()] == [
        ("KAI-W-001", "kai-gitops-waivers.yaml:6", "(repository)")
    ]


def test_non_utf8_waivers_file_is_one_line(repo_dir: Path) -> None:
    (repo_dir / "kai-gitops-waivers.yaml").write_bytes(b"- rule: X\n  subject: '*'\n  reason: \xff\n")
    repo = SimpleNamespace(tree=open_tree(str(repo_dir), worktree=True), config=Config())
    with pytest.raises(UserError) as err:
        runner.repo_waivers(repo)  # type: ignore[arg-type]
    assert err.value.line().startswith("kai-gitops-waivers.yaml:3: not valid UTF-8 (byte 0xff)")


def test_conflicting_repo_data_files_are_refused_naming_both(repo_dir: Path) -> None:
    (repo_dir / "more.yaml").write_text("budget:\n  max_queues: 9\n")
    repo = SimpleNamespace(
        tree=open_tree(str(repo_dir), worktree=True), config=Config(policy_data=("budget.yaml", "more.yaml"))
    )
    with pytest.raises(UserError) as err:
        runner.repo_policy_data(repo)
    assert err.value.line() == (
        "more.yaml: data.user.budget.max_queues is also set by budget.yaml with a different value"
    )


def test_repo_data_files_merge_nested_mappings(repo_dir: Path) -> None:
    (repo_dir / "more.yaml").write_text("budget:\n  max_queues: 2\n  teams: [a]\nlabels: {x: 1}\n")
    repo = SimpleNamespace(
        tree=open_tree(str(repo_dir), worktree=True), config=Config(policy_data=("budget.yaml", "more.yaml"))
    )
    assert runner.repo_policy_data(repo) == {"budget": {"max_queues": 2, "teams": ["a"]}, "labels": {"x": 1}}
