"""The CI templates and pre-commit hooks users copy: they parse, and every kai-gitops call they make exists.

Each `kai-gitops …` command line is cut out of the shell, its `$VARIABLES` replaced by sample values, and
parsed by the real click command tree (options, choices and the -o callback), without running it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from reconciler.cli import main
from tests.helpers import ROOT

CI = ROOT / "repo-templates" / "ci"
GITHUB = CI / "github-actions.yml"
GITLAB = CI / "gitlab-ci.yml"
PRE_COMMIT = ROOT / ".pre-commit-hooks.yaml"
_SHELL_END = {"|", "||", "&&", ";", ">", "2>", ">>"}


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def kai_gitops_calls(script: str) -> list[list[str]]:
    """Every `kai-gitops ARGS` in a shell script, as the argument list click would get."""
    calls = []
    text = re.sub(r"\$\{?(\w+)\}?", lambda m: f"SAMPLE_{m.group(1)}", script.replace("\\\n", " "))
    for line in text.splitlines():
        tokens = shlex.split(line, comments=True)
        while "kai-gitops" in tokens:
            tokens = tokens[tokens.index("kai-gitops") + 1:]
            end = next((i for i, t in enumerate(tokens) if t in _SHELL_END), len(tokens))
            calls.append(tokens[:end])
            tokens = tokens[end:]
    return calls


def parse_call(args: list[str]) -> tuple[click.Command, dict[str, Any]]:
    """Resolve the subcommand and parse its options with click itself: unknown ones raise."""
    command: click.Command = main
    rest = list(args)
    while isinstance(command, click.Group):
        assert rest, f"no subcommand in kai-gitops {' '.join(args)}"
        name = rest.pop(0)
        assert name in command.commands, f"kai-gitops has no command {name!r}"
        command = command.commands[name]
    context = command.make_context(f"kai-gitops {args[0]}", rest)
    return command, context.params


def github_runs() -> list[str]:
    steps = load(GITHUB)["jobs"]["check"]["steps"]
    return [step["run"] for step in steps if "run" in step]


def gitlab_scripts() -> list[str]:
    job = load(GITLAB)["kai-gitops"]
    return [line for key in ("before_script", "script", "after_script") for line in job.get(key, [])]


def pre_commit_entries() -> list[str]:
    return [f"kai-gitops {hook['entry'].removeprefix('kai-gitops ')}" for hook in load(PRE_COMMIT)]


@pytest.mark.parametrize("scripts", [github_runs, gitlab_scripts, pre_commit_entries])
def test_every_kai_gitops_call_parses_against_the_command_tree(scripts: Any) -> None:
    calls = [call for script in scripts() for call in kai_gitops_calls(script)]
    assert calls
    for call in calls:
        parse_call(call)


def test_the_parser_rejects_what_does_not_exist() -> None:
    with pytest.raises(click.UsageError):
        parse_call(["check", "--no-such-option"])
    with pytest.raises(click.BadParameter):
        parse_call(["check", "-o", "sarif2"])
    assert kai_gitops_calls('kai-gitops check --base "origin/$BASE" -o text | tee x') == [
        ["check", "--base", "origin/SAMPLE_BASE", "-o", "text"]]


def outputs_of(call: list[str]) -> dict[str, str]:
    _, params = parse_call(call)
    return {spec.format: spec.path for spec in params["output"]}


def test_github_workflow_checks_against_the_base_and_uploads_its_sarif() -> None:
    workflow = load(GITHUB)
    (call,) = [c for run in github_runs() for c in kai_gitops_calls(run)]
    _, params = parse_call(call)
    assert params["base"] == "origin/SAMPLE_BASE_REF"
    assert workflow["jobs"]["check"]["steps"][-2]["env"]["BASE_REF"] == "${{ github.base_ref }}"
    outputs = outputs_of(call)
    assert outputs["github"] == "-" and outputs["text"] == "-"
    upload = next(s for s in workflow["jobs"]["check"]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == outputs["sarif"]
    assert upload["if"] == "success() || failure()"
    checkout = workflow["jobs"]["check"]["steps"][0]
    assert checkout["with"]["fetch-depth"] == 0


def test_github_workflow_asks_for_least_privilege() -> None:
    workflow = load(GITHUB)
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["check"]["permissions"] == {"contents": "read", "security-events": "write",
                                                        "actions": "read"}
    assert "${{" not in "".join(github_runs())   # expressions go through env, not into shell text
    assert list(workflow[True]) == ["pull_request"]   # YAML 1.1 reads `on:` as true


def test_gitlab_job_publishes_code_quality_junit_and_the_mr_note() -> None:
    job = load(GITLAB)["kai-gitops"]
    (call,) = [c for s in job["script"] for c in kai_gitops_calls(s)]
    outputs = outputs_of(call)
    assert job["artifacts"]["reports"]["codequality"] == outputs["gitlab"]
    assert job["artifacts"]["reports"]["junit"] == outputs["junit"]
    assert job["artifacts"]["when"] == "always"
    note = "".join(job["after_script"])
    assert f"body@{outputs['markdown']}" in note and "merge_requests/$CI_MERGE_REQUEST_IID/notes" in note
    assert parse_call(call)[1]["base"] == "origin/SAMPLE_CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
    assert job["variables"]["GIT_DEPTH"] == "0"


def test_pre_commit_hook_is_a_whole_repository_check_of_the_working_tree() -> None:
    (hook,) = load(PRE_COMMIT)
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    _, params = parse_call(kai_gitops_calls(pre_commit_entries()[0])[0])
    assert params["worktree"] is True
    assert re.search(hook["files"], "kai-gitops.yaml") and re.search(hook["files"], "policy/x.rego")
    assert not re.search(hook["files"], "README.md")
