"""templates/kai-gitops-check.yml, the GitLab CI/CD component: GitLab's component layout (a `spec:` header
document, then the job), the inputs the GitHub Action has, every input used and every input used declared,
and its job's script run as a runner runs it (the `$[[ inputs ]]` interpolated as GitLab does, with the
defaults) against a real merge request's repository."""

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

from tests.support.deploy_ci_templates import GITLAB, PLACEHOLDER, load, parse_call, release_ref
from tests.support.deploy_github_action import ACTION_INPUTS, pr_repo
from tests.support.helpers import ROOT

COMPONENT = ROOT / "templates" / "kai-gitops-check.yml"
_INPUT = re.compile(r"\$\[\[\s*inputs\.([A-Za-z0-9_-]+)\s*\]\]")
GITHUB_ONLY = {"upload-sarif", "token"}  # code scanning and github.token have no GitLab counterpart
GITLAB_ONLY = {"stage", "git-url"}  # a job's stage; the action installs its own checkout instead


def documents() -> tuple[dict[str, Any], str]:
    header, body = COMPONENT.read_text().split("\n---\n")
    return yaml.safe_load(header), body


def inputs() -> dict[str, dict[str, Any]]:
    return documents()[0]["spec"]["inputs"]


def interpolate(given: dict[str, Any] | None = None, body: str | None = None) -> dict[str, Any]:
    """The job as GitLab builds it: each `$[[ inputs.NAME ]]` replaced by the given value or the default. The
    include gives `version` as the docs show it (the one required input); GitLab refuses an include without it."""
    values = {name: spec["default"] for name, spec in inputs().items() if "default" in spec}
    values |= {"version": release_ref()} | (given or {})
    missing = set(inputs()) - set(values)
    if missing:
        raise KeyError(f"the include gives no value for required input(s) {sorted(missing)}")

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in inputs():
            raise KeyError(f"the component uses undeclared input {name!r}")
        v = values[name]
        return str(v).lower() if isinstance(v, bool) else str(v)

    return yaml.safe_load(_INPUT.sub(value, documents()[1] if body is None else body))


def test_the_component_is_a_spec_header_and_one_job() -> None:
    header, _ = documents()
    assert set(header) == {"spec"} and set(header["spec"]) == {"inputs"}
    for name, spec in inputs().items():
        assert set(spec) <= {"description", "default", "type", "options", "regex"}, name
        assert spec.get("type", "string") in {"string", "boolean", "number", "array"}, name
        # Only the release is required of every user: no default could name a tag their mirror has.
        assert ("default" in spec) == (name != "version"), f"{name}: only `version` may be required"
        if "options" in spec:
            assert spec["default"] in spec["options"], name
    (job,) = interpolate().values()
    assert job["stage"] == "test" and job["image"] == "python:3.12"


def test_the_component_has_the_actions_inputs() -> None:
    assert set(inputs()) - GITLAB_ONLY == ACTION_INPUTS - GITHUB_ONLY
    assert inputs()["fail-on"]["options"] == ["info", "warning", "error"]


def test_every_input_is_used_and_every_input_used_is_declared() -> None:
    used = set(_INPUT.findall(documents()[1]))
    assert used == set(inputs()), (used - set(inputs()), set(inputs()) - used)
    with pytest.raises(KeyError, match="failon"):
        interpolate(body=documents()[1].replace("inputs.fail-on", "inputs.failon"))


def test_it_installs_the_release_from_the_one_placeholder_url() -> None:
    (job,) = interpolate().values()
    assert job["variables"]["KAI_GITOPS_INSTALL"] == f"kai-gitops @ git+{PLACEHOLDER}@{release_ref()}"
    assert job["before_script"][0] == 'python -m pip install "$KAI_GITOPS_INSTALL"'  # as the templates install


def test_it_publishes_what_the_gitlab_template_publishes() -> None:
    (job,) = interpolate().values()
    template = load(GITLAB)["kai-gitops"]
    assert job["artifacts"] == template["artifacts"] and job["after_script"] == template["after_script"]
    assert job["rules"] == template["rules"] and job["variables"]["GIT_DEPTH"] == "0"


def run_job(tmp_path: Path, given: dict[str, Any], env: dict[str, str], path: str) -> subprocess.CompletedProcess[str]:
    """The job's script in the project directory, its variables expanded from the CI variables as GitLab does."""
    (job,) = interpolate(given).values()
    ci = {"CI": "true", "GITLAB_CI": "true", "CI_PIPELINE_SOURCE": "merge_request_event", **env}
    variables = {k: re.sub(r"\$(\w+)", lambda m: ci.get(m.group(1), ""), v) for k, v in job["variables"].items()}
    run_env = {**os.environ, **ci, **variables, "PATH": path}
    run_env.pop("KAI_GITOPS_LOG_FORMAT", None)
    script = "\n".join(job["script"])
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=tmp_path / "repo",
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


_MR = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/x"}
_REAL = f"{Path(sys.executable).parent}:{os.environ['PATH']}"


def test_the_job_writes_the_merge_requests_reports(tmp_path: Path) -> None:
    repo = pr_repo(tmp_path, "scheduler:\n  placementStrategy: spread\n")
    done = run_job(tmp_path, {}, _MR, _REAL)
    assert done.returncode == 2, done.stderr  # findings at or above warning fail the job
    issues = json.loads((repo / "gl-code-quality-report.json").read_text())
    # the values the PR rewrote, and the queue file whose research queue its default parent no longer holds
    paths = {i["location"]["path"] for i in issues}
    assert paths == {"clusters/lab/kai-values.yaml", "clusters/lab/queues.yaml"}, paths
    assert "<testsuite" in (repo / "kai-gitops-junit.xml").read_text()
    assert (repo / "kai-gitops-note.md").read_text().startswith("<!--")
    assert json.loads((repo / "kai-gitops.sarif").read_text())["runs"]


def test_a_job_that_stops_on_an_error_prints_one_line(tmp_path: Path) -> None:
    repo = pr_repo(tmp_path, "scheduler:\n\tplacementStrategy: spread\n")
    done = run_job(tmp_path, {}, _MR, _REAL)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("kai-gitops: error: clusters/lab/kai-values.yaml:2"), line
    (issue,) = json.loads((repo / "gl-code-quality-report.json").read_text())
    assert issue["check_name"] == "input-error"


def test_each_input_becomes_its_option(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    fake = tmp_path / "bin" / "kai-gitops"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path}/args\n")
    fake.chmod(0o755)
    snapshot = tmp_path / "lab.yaml"
    snapshot.write_text("")
    given = {
        "base-ref": "release-1",
        "cluster": "lab",
        "shard": "2/4",
        "fail-on": "error",
        "fix-pr": True,
        "path": "gitops",
        "live-snapshot": f"{snapshot}\n",
    }
    done = run_job(
        tmp_path, given, {**_MR, "KAI_GITOPS_GITLAB_TOKEN": "glpat-test"}, f"{fake.parent}:{os.environ['PATH']}"
    )
    assert done.returncode == 0, done.stderr
    _, params = parse_call((tmp_path / "args").read_text().splitlines())
    assert params["base"] == "origin/release-1" and params["cluster"] == "lab" and params["shard"] == "2/4"
    assert params["fail_on"] == "error" and params["fix_git"] is True and params["ref"] == "origin/feature/x"
    assert params["repo"] == "gitops"
    assert params["live_snapshot"] == ((None, str(snapshot)),)
    (job,) = interpolate().values()
    _, defaults = parse_call(["check", *_default_args(tmp_path, fake)])
    assert defaults["base"] == "origin/main" and not defaults["fix_git"] and defaults["repo"] == "."
    assert defaults["live_snapshot"] == ()
    assert {spec.format: spec.path for spec in defaults["output"]} == {
        "text": "-",
        "gitlab": job["artifacts"]["reports"]["codequality"],
        "junit": job["artifacts"]["reports"]["junit"],
        "markdown": "kai-gitops-note.md",
        "sarif": "kai-gitops.sarif",
    }


def _default_args(tmp_path: Path, fake: Path) -> list[str]:
    done = run_job(tmp_path, {}, _MR, f"{fake.parent}:{os.environ['PATH']}")
    assert done.returncode == 0, done.stderr
    return (tmp_path / "args").read_text().splitlines()[1:]
