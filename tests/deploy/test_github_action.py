"""action.yml, the composite GitHub Action: its metadata, every input wired to the check and every output
written, its steps run as a runner runs them (the `${{ }}` expressions of inputs and contexts filled in, bash
with GitHub's flags) against a real repository, and its install step installing its own checkout.

GitHub publishes no machine-readable schema of action metadata beside its docs ("Metadata syntax for GitHub
Actions"); the metadata test checks the keys and rules of that page by hand. actionlint checks how a workflow
uses the action (tests/deploy/test_ci_templates.py), reading this action.yml.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.deploy_ci_templates import local_tag, parse_call, throwaway_venv
from tests.support.deploy_github_action import ACTION_INPUTS, action, pr_repo

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def step(step_id: str) -> dict[str, Any]:
    (found,) = [s for s in action()["runs"]["steps"] if s.get("id") == step_id or s.get("name") == step_id]
    return found


# -- metadata -------------------------------------------------------------------------------------------------


def test_the_metadata_has_what_github_requires_of_a_composite_action() -> None:
    meta = action()
    assert set(meta) <= {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
    assert isinstance(meta["name"], str) and isinstance(meta["description"], str)
    assert len(meta["description"]) <= 125  # the Marketplace's limit
    assert set(meta["branding"]) == {"icon", "color"}
    runs = meta["runs"]
    assert runs["using"] == "composite" and set(runs) == {"using", "steps"}
    ids = [s["id"] for s in runs["steps"] if "id" in s]
    assert len(ids) == len(set(ids))
    for s in runs["steps"]:
        assert ("uses" in s) != ("run" in s), s
        if "run" in s:
            assert s["shell"] == "bash", s  # a composite run step must name its shell
        assert set(s) <= {
            "name",
            "id",
            "if",
            "uses",
            "with",
            "run",
            "shell",
            "env",
            "working-directory",
            "continue-on-error",
        }, s
    for name, spec in meta["inputs"].items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), name
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
        assert isinstance(spec["description"], str) and isinstance(spec.get("default", ""), str), name
    for name, spec in meta["outputs"].items():
        assert set(spec) == {"description", "value"}, name  # composite outputs need a value


def test_every_input_is_used_and_every_input_used_is_declared() -> None:
    used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", yaml.safe_dump(action()["runs"])))
    assert used == ACTION_INPUTS, (used - ACTION_INPUTS, ACTION_INPUTS - used)


def test_every_output_is_one_the_check_step_writes() -> None:
    script = step("check")["run"]
    for name, spec in action()["outputs"].items():
        assert spec["value"] == f"${{{{ steps.check.outputs.{name} }}}}", name
        assert f"{name}=" in script or name in {"findings", "errors", "warnings"}, name
    assert '("findings", "errors", "warnings")' in script


def test_sarif_is_uploaded_from_the_file_the_check_wrote_when_asked() -> None:
    upload = step("Upload SARIF to code scanning")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif-file }}"
    assert upload["if"] == "inputs.upload-sarif == 'true' && steps.check.outputs.sarif-file != ''"
    # A fork's pull request cannot upload (no security-events: write): that must not fail a clean check's job.
    assert upload["continue-on-error"] is True


# -- the steps as a runner runs them ---------------------------------------------------------------------------


def _value(expr: str, contexts: dict[str, dict[str, str]]) -> str:
    """One expression of the forms the action uses: `ctx.name`, and `a || b`."""
    for alternative in expr.split("||"):
        context, _, name = alternative.strip().partition(".")
        if context == "inputs" and name not in contexts["inputs"]:
            raise KeyError(f"action.yml uses undeclared input {name!r}")
        if value := contexts[context].get(name, ""):
            return value
    return ""


def render(text: str, contexts: dict[str, dict[str, str]]) -> str:
    return _EXPRESSION.sub(lambda m: _value(m.group(1), contexts), text)


def contexts(inputs: dict[str, str], github: dict[str, str], temp: Path) -> dict[str, dict[str, str]]:
    given = set(inputs) - ACTION_INPUTS
    assert not given, f"no such inputs: {given}"
    base = {"github": {"token": "ghs_test", **github}, "runner": {"temp": str(temp)}, "inputs": {}}
    defaults = {name: render(spec.get("default", ""), base) for name, spec in action()["inputs"].items()}
    return {**base, "inputs": {**defaults, **inputs}}


def run_step(
    name: str,
    ctx: dict[str, dict[str, str]],
    workspace: Path,
    path: str,
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], Path]:
    """The step's script under `bash --noprofile --norc -eo pipefail`, as GitHub runs a bash step."""
    spec = step(name)
    out_file, summary = workspace / "github-output", workspace / "step-summary.md"
    out_file.write_text("")
    env = {k: render(str(v), ctx) for k, v in spec.get("env", {}).items()}
    run_env = {
        **os.environ,
        "PATH": path,
        "GITHUB_OUTPUT": str(out_file),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        **env,
    }
    run_env.pop("KAI_GITOPS_LOG_FORMAT", None)  # the default, as on a runner
    cwd = workspace / render(spec.get("working-directory", "."), ctx)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", spec["run"]],
        cwd=cwd,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    return done, outputs, summary


_FINDING = "scheduler:\n  placementStrategy: spread\n"
_TAB_ERROR = "scheduler:\n\tplacementStrategy: spread\n"
_REAL = f"{Path(sys.executable).parent}:{os.environ['PATH']}"


def test_the_check_step_annotates_summarises_and_counts_the_findings_of_a_pull_request(tmp_path: Path) -> None:
    repo = pr_repo(tmp_path, _FINDING)
    ctx = contexts({"path": "repo"}, {"base_ref": "main"}, tmp_path)
    done, outputs, summary = run_step("check", ctx, tmp_path, _REAL)
    assert done.returncode == 0, done.stderr  # the verdict is the last step's
    assert outputs["exit-code"] == "2"
    report = json.loads(Path(outputs["json-file"]).read_text())
    assert report["failOn"] == "warning" and report["changedLines"]  # --base origin/main: a PR check
    assert int(outputs["findings"]) == report["summary"]["findings"] > 0
    assert int(outputs["errors"]) + int(outputs["warnings"]) > 0
    assert json.loads(Path(outputs["sarif-file"]).read_text())["runs"]
    assert "::error file=clusters/lab/kai-values.yaml" in done.stdout or "::warning" in done.stdout
    assert summary.read_text().strip()
    assert repo.is_dir()


def test_a_check_that_stops_on_an_error_prints_one_line_and_still_writes_sarif(tmp_path: Path) -> None:
    pr_repo(tmp_path, _TAB_ERROR)
    ctx = contexts({"path": "repo"}, {"base_ref": "main"}, tmp_path)
    done, outputs, _ = run_step("check", ctx, tmp_path, _REAL)
    assert outputs["exit-code"] == "1" and "findings" not in outputs and "json-file" not in outputs
    assert json.loads(Path(outputs["sarif-file"]).read_text())["runs"]  # the error, where reviewers look
    (line,) = done.stderr.splitlines()
    assert line.startswith("kai-gitops: error: clusters/lab/kai-values.yaml:2"), line
    assert "::error file=clusters/lab/kai-values.yaml,line=2" in done.stdout


def recorded_args(tmp_path: Path, inputs: dict[str, str], github: dict[str, str]) -> list[str]:
    """The arguments the check step gives kai-gitops, recorded by a stand-in that exits 2."""
    fake = tmp_path / "bin" / "kai-gitops"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path}/args\nexit 2\n")
    fake.chmod(0o755)
    ctx = contexts(inputs, github, tmp_path)
    done, outputs, _ = run_step("check", ctx, tmp_path, f"{fake.parent}:{os.environ['PATH']}")
    assert done.returncode == 0 and outputs["exit-code"] == "2", done.stderr
    return (tmp_path / "args").read_text().splitlines()


def test_each_input_becomes_its_option(tmp_path: Path) -> None:
    snapshots = [tmp_path / "lab snapshot.yaml", tmp_path / "prod.json"]
    for snapshot in snapshots:
        snapshot.write_text("")
    args = recorded_args(
        tmp_path,
        {
            "base-ref": "release-1",
            "cluster": "lab",
            "shard": "2/4",
            "fail-on": "error",
            "fix-pr": "true",
            "live-snapshot": f"lab={snapshots[0]}\n\nprod-addon={snapshots[1]}\n",
        },
        {"base_ref": "main", "head_ref": "feature/x"},
    )
    _, params = parse_call(args)  # the real command tree takes them
    assert params["base"] == "origin/release-1" and params["cluster"] == "lab" and params["shard"] == "2/4"
    assert params["live_snapshot"] == (("lab", str(snapshots[0])), ("prod-addon", str(snapshots[1])))
    assert params["fail_on"] == "error" and params["fix_git"] is True and params["ref"] == "origin/feature/x"
    assert {spec.format for spec in params["output"]} == {"github", "sarif", "json"}


def test_without_inputs_it_checks_the_pull_request_against_its_base(tmp_path: Path) -> None:
    args = recorded_args(tmp_path, {}, {"base_ref": "main", "head_ref": "feature/x"})
    _, params = parse_call(args)
    assert params["base"] == "origin/main" and params["fail_on"] == "warning"
    assert not params["cluster"] and not params["shard"] and not params["fix_git"] and params["ref"] == "HEAD"
    assert params["live_snapshot"] == ()


def test_outside_a_pull_request_it_checks_the_whole_repository(tmp_path: Path) -> None:
    _, params = parse_call(recorded_args(tmp_path, {}, {}))
    assert params["base"] is None


@pytest.mark.parametrize("code", ["0", "1", "2"])
def test_the_verdict_step_fails_the_job_with_the_checks_exit_code(tmp_path: Path, code: str) -> None:
    ctx = contexts({}, {}, tmp_path)
    ctx["steps"] = {}
    verdict = step("Verdict")
    env = {k: v.replace("${{ steps.check.outputs.exit-code }}", code) for k, v in verdict["env"].items()}
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", verdict["run"]],
        env={**os.environ, **env},
        timeout=30,
    )
    assert str(done.returncode) == code


@pytest.mark.parametrize("version", ["", "from-git"])
def test_the_install_step_installs_the_actions_own_checkout_or_the_version_asked(
    tmp_path: Path, local_release: Path, version: str
) -> None:
    """With no `version`, the copy GitHub checked out for `uses: …@ref`; with one, that ref of the action's own
    repository (github.server_url/github.action_repository, here a file:// clone)."""
    venv_dir = throwaway_venv(tmp_path / "venv")
    server, repository = local_release.parent.as_uri(), local_release.name
    ctx = contexts(
        {"version": local_tag() if version else ""},
        {"action_path": str(local_release), "server_url": server, "action_repository": repository},
        tmp_path,
    )
    base = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env = {k: render(str(v), ctx) for k, v in step("Install kai-gitops")["env"].items()}
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step("Install kai-gitops")["run"]],
        cwd=tmp_path,
        env={
            **base,
            **env,
            "PATH": f"{venv_dir / 'bin'}:{os.environ['PATH']}",
            "PIP_NO_DEPS": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith(f"kai-gitops, version {local_tag().removeprefix('v')}")
    where = subprocess.run(
        [str(venv_dir / "bin" / "python"), "-c", "import reconciler; print(reconciler.__file__)"],
        cwd=tmp_path,
        env=base,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv_dir.resolve())
