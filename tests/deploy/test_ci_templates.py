"""The CI templates and pre-commit hooks users copy: they parse, and every kai-gitops call they make exists.

Each `kai-gitops …` command line is cut out of the shell, its `$VARIABLES` replaced by sample values, and
parsed by the real click command tree (options, choices and the -o callback), without running it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import click
import pygit2
import pytest
import yaml

from tests.support.deploy_ci_templates import (
    CI,
    GITLAB,
    PLACEHOLDER,
    RELEASE_TAG,
    load,
    local_tag,
    parse_call,
    release_ref,
    throwaway_venv,
)
from tests.support.helpers import ROOT

GITHUB = CI / "github-actions.yml"
GITHUB_SHARDED = CI / "github-actions-sharded.yml"
GITLAB_SHARDED = CI / "gitlab-ci-sharded.yml"
PRE_COMMIT = ROOT / ".pre-commit-hooks.yaml"
_SHELL_END = {"|", "||", "&&", ";", ">", "2>", ">>"}


def kai_gitops_calls(script: str) -> list[list[str]]:
    """Every `kai-gitops ARGS` in a shell script, as the argument list click would get."""
    calls = []
    text = re.sub(r"\$\{?(\w+)\}?", lambda m: f"SAMPLE_{m.group(1)}", script.replace("\\\n", " "))
    for line in text.splitlines():
        tokens = shlex.split(re.sub(r";(\s|$)", r" ;\1", line), comments=True)  # `cmd; exit 1`: `;` ends it
        while "kai-gitops" in tokens:
            tokens = tokens[tokens.index("kai-gitops") + 1 :]
            end = next((i for i, t in enumerate(tokens) if t in _SHELL_END), len(tokens))
            calls.append(tokens[:end])
            tokens = tokens[end:]
    return calls


def github_runs(path: Path = GITHUB) -> list[str]:
    return [step["run"] for job in load(path)["jobs"].values() for step in job["steps"] if "run" in step]


def gitlab_scripts(path: Path = GITLAB) -> list[str]:
    return [
        line
        for job in load(path).values()
        for key in ("before_script", "script", "after_script")
        for line in job.get(key, [])
    ]


def github_sharded_runs() -> list[str]:
    return github_runs(GITHUB_SHARDED)


def gitlab_sharded_scripts() -> list[str]:
    return gitlab_scripts(GITLAB_SHARDED)


def pre_commit_entries() -> list[str]:
    return [f"kai-gitops {hook['entry'].removeprefix('kai-gitops ')}" for hook in load(PRE_COMMIT)]


@pytest.mark.parametrize("scripts", [gitlab_scripts, github_sharded_runs, gitlab_sharded_scripts, pre_commit_entries])
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
        ["check", "--base", "origin/SAMPLE_BASE", "-o", "text"]
    ]


def outputs_of(call: list[str]) -> dict[str, str]:
    _, params = parse_call(call)
    return {spec.format: spec.path for spec in params["output"]}


def test_github_workflow_runs_the_action_on_the_full_history_without_persisted_credentials() -> None:
    """The check itself (base, SARIF upload, annotations) is the action's: tests/deploy/test_github_action.py."""
    from tests.support.deploy_github_action import ACTION_INPUTS, action_step

    step = action_step(load(GITHUB))
    assert set(step.get("with", {})) <= ACTION_INPUTS
    assert step["uses"] == f"<owner>/kai-gitops@{release_ref()}"
    checkout = load(GITHUB)["jobs"]["check"]["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}


# Files whose change alters what `check` finds: the config and policies, and every file of a function chart
# (helpers, NOTES, the lock, .helmignore, packaged dependencies, files a template reads with .Files.Get).
CHECKED_CHANGES = [
    "kai-gitops.yaml",
    "clusters/gpu/env.yaml",
    "policies/team.rego",
    "charts/fn/values.json",
    "charts/fn/templates/sts.yaml",
    "charts/fn/templates/_helpers.tpl",
    "charts/fn/templates/NOTES.txt",
    "charts/fn/Chart.lock",
    "charts/fn/.helmignore",
    "charts/fn/charts/common-2.1.0.tgz",
    "charts/fn/files/nccl.conf",
    "Chart.lock",
]
GITLAB_PIPELINES = [GITLAB, GITLAB_SHARDED, ROOT / "templates" / "kai-gitops-check.yml"]  # the last: spec + jobs


def _github_glob(pattern: str) -> re.Pattern[str]:
    """GitHub's path filter glob: `**` crosses directories, `*` and `?` do not."""
    parts = re.split(r"(\*\*/?|\*|\?)", pattern)
    table = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(table.get(part, re.escape(part)) for part in parts))


def _pull_request_runs_for(workflow: Any, path: str) -> bool:
    trigger = (workflow.get("on") or workflow[True])["pull_request"] or {}
    included = any(_github_glob(p).fullmatch(path) for p in trigger.get("paths", ["**"]))
    return included and not any(_github_glob(p).fullmatch(path) for p in trigger.get("paths-ignore", []))


@pytest.mark.parametrize(
    "workflow",
    [GITHUB, GITHUB_SHARDED, ROOT / "reconciler/data/init/ci/github-actions.yml"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_a_change_to_any_chart_file_runs_the_github_check(workflow: Path) -> None:
    """Filtered by extension, a pull request changing only _helpers.tpl changed the render and ran nothing."""
    assert _github_glob("**/*.yaml").fullmatch("a/b.yaml") and not _github_glob("*.yaml").fullmatch("a/b.yaml")
    skipped = [path for path in CHECKED_CHANGES if not _pull_request_runs_for(load(workflow), path)]
    assert skipped == []


@pytest.mark.parametrize("template", GITLAB_PIPELINES, ids=lambda p: p.name)
def test_the_gitlab_check_runs_on_every_merge_request_change(template: Path) -> None:
    """GitLab's `rules: changes:` would skip the same chart files: the jobs have none."""
    *_, jobs = yaml.safe_load_all(template.read_text())
    rules = [rule for job in jobs.values() if isinstance(job, dict) for rule in job.get("rules", [])]
    assert rules and not [rule for rule in rules if "changes" in rule]


def test_github_workflow_asks_for_least_privilege() -> None:
    workflow = load(GITHUB)
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["check"]["permissions"] == {
        "contents": "read",
        "security-events": "write",
        "actions": "read",
    }
    assert "${{" not in "".join(github_runs())  # expressions go through env, not into shell text
    assert list(workflow[True]) == ["pull_request"]  # YAML 1.1 reads `on:` as true


def test_gitlab_job_publishes_code_quality_junit_and_the_mr_note() -> None:
    job = load(GITLAB)["kai-gitops"]
    (call,) = [c for s in job["script"] for c in kai_gitops_calls(s)]
    outputs = outputs_of(call)
    assert job["artifacts"]["reports"]["codequality"] == outputs["gitlab"]
    assert job["artifacts"]["reports"]["junit"] == outputs["junit"]
    assert job["artifacts"]["when"] == "always"
    assert outputs["markdown"] == "kai-gitops-note.md" and outputs["markdown"] in job["after_script"][0]
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


class _NotesApi(BaseHTTPRequestHandler):
    """The GitLab REST calls the MR-note step makes: GET /user, GET/POST/PUT merge request notes.

    Models only what the step uses: the token header, one project and MR, note authors; not paging
    beyond the first 100 notes, permissions or rate limits.
    """

    notes: ClassVar[list[dict[str, Any]]] = []
    calls: ClassVar[list[str]] = []

    def _reply(self, value: Any, status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> str:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))["body"]

    def do_GET(self) -> None:
        self.calls.append(f"GET {self.path}")
        assert self.headers["PRIVATE-TOKEN"] == "glpat-test"
        if self.path == "/api/v4/user":
            return self._reply({"id": 7, "username": "project_1_bot"})
        assert self.path == "/api/v4/projects/42/merge_requests/5/notes?per_page=100&sort=desc"
        return self._reply(self.notes)

    def do_POST(self) -> None:
        self.calls.append(f"POST {self.path}")
        note = {"id": 100 + len(self.notes), "author": {"id": 7}, "body": self._body()}
        self.notes.insert(0, note)
        self._reply(note, 201)

    def do_PUT(self) -> None:
        self.calls.append(f"PUT {self.path}")
        note = next(n for n in self.notes if self.path.endswith(f"/notes/{n['id']}"))
        note["body"] = self._body()
        self._reply(note)

    def log_message(self, *args: Any) -> None:
        pass


def test_gitlab_note_step_posts_once_then_updates_its_own_note(tmp_path: Path) -> None:
    script = load(GITLAB)["kai-gitops"]["after_script"][0]
    server = HTTPServer(("127.0.0.1", 0), _NotesApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _NotesApi.notes = [{"id": 1, "author": {"id": 8}, "body": "<!-- kai-gitops-report -->\nsomeone else's"}]
    _NotesApi.calls = []
    env = {
        "PATH": os.environ["PATH"],
        "CI_API_V4_URL": f"http://127.0.0.1:{server.server_port}/api/v4",
        "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "5",
        "KAI_GITOPS_GITLAB_TOKEN": "glpat-test",
    }
    try:
        for text in ("<!-- kai-gitops-report -->\nfirst run\n", "<!-- kai-gitops-report -->\nsecond run\n"):
            (tmp_path / "kai-gitops-note.md").write_text(text)
            subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, check=True, timeout=60)
        subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=tmp_path,
            env=env | {"KAI_GITOPS_GITLAB_TOKEN": ""},
            check=True,
            timeout=60,
        )
    finally:
        server.shutdown()
    ours = [n for n in _NotesApi.notes if n["author"]["id"] == 7]
    assert [n["body"] for n in ours] == ["<!-- kai-gitops-report -->\nsecond run\n"]
    assert [c.split(" ")[0] for c in _NotesApi.calls] == ["GET", "GET", "POST", "GET", "GET", "PUT"]
    assert _NotesApi.notes[-1]["body"].endswith("someone else's")  # never edits another user's note


# -- the sharded templates (issue 10 item 4): a matrix of `check --shard` jobs, then `report merge` ----------------


def only_call(script: str, command: str) -> list[str]:
    (call,) = [c for c in kai_gitops_calls(script) if c[0] == command]
    return call


def test_github_sharded_workflow_is_a_shard_matrix_and_a_merge_job() -> None:
    workflow = load(GITHUB_SHARDED)
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and len(shards) > 1
    assert shard_job["strategy"]["fail-fast"] is False  # one broken shard must not hide the others' errors
    step = next(s for s in shard_job["steps"] if "kai-gitops check" in s.get("run", ""))
    assert step["env"] == {
        "BASE_REF": "${{ github.base_ref }}",
        "SHARD": "${{ matrix.shard }}",
        "SHARDS": "${{ strategy.job-total }}",
    }
    call = kai_gitops_calls(step["run"])[0]  # the second runs only on an error
    _, params = parse_call(call)
    assert params["shard"] == "SAMPLE_SHARD/SAMPLE_SHARDS" and params["base"] == "origin/SAMPLE_BASE_REF"
    report = outputs_of(call)["json"]
    upload = next(s for s in shard_job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == report and upload["with"]["if-no-files-found"] == "error"
    artifact = upload["with"]["name"].replace("${{ matrix.shard }}", "3")

    assert merge_job["needs"] == "shard"
    download = next(s for s in merge_job["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert fnmatch.fnmatch(artifact, download["with"]["pattern"])
    merge_run = next(s["run"] for s in merge_job["steps"] if "report merge" in s.get("run", ""))
    merge_call = only_call(merge_run, "report")
    _, merge_params = parse_call(merge_call)
    (files,) = merge_params["files"]
    assert fnmatch.fnmatch(f"{download['with']['path']}/{artifact}/{report}", files)  # what download-artifact lays out
    outputs = outputs_of(merge_call)
    assert outputs["github"] == "-" and "text" not in outputs  # github carries the text log (wrapped)
    sarif = next(s for s in merge_job["steps"] if "upload-sarif" in s.get("uses", ""))
    assert sarif["with"]["sarif_file"] == outputs["sarif"] and sarif["if"] == "success() || failure()"


def test_github_sharded_workflow_asks_for_least_privilege() -> None:
    workflow = load(GITHUB_SHARDED)
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["shard"]["permissions"] == {"contents": "read"}  # shards upload nothing to GitHub
    assert workflow["jobs"]["merge"]["permissions"] == load(GITHUB)["jobs"]["check"]["permissions"]
    assert "${{" not in "".join(github_sharded_runs())
    assert all(
        s["with"]["persist-credentials"] is False
        for job in workflow["jobs"].values()
        for s in job["steps"]
        if s.get("uses", "").startswith("actions/checkout@")
    )


def test_gitlab_sharded_pipeline_is_parallel_shards_and_a_merge_job() -> None:
    pipeline = load(GITLAB_SHARDED)
    shard_job, merge_job = pipeline["kai-gitops-shard"], pipeline["kai-gitops"]
    assert isinstance(shard_job["parallel"], int) and shard_job["parallel"] > 1
    call = kai_gitops_calls(shard_job["script"][0])[0]  # the second runs only on an error
    _, params = parse_call(call)
    assert params["shard"] == "SAMPLE_CI_NODE_INDEX/SAMPLE_CI_NODE_TOTAL"
    report = outputs_of(call)["json"].replace("SAMPLE_CI_NODE_INDEX", "2")
    assert any(fnmatch.fnmatch(report, p) for p in shard_job["artifacts"]["paths"])
    assert merge_job["needs"] == ["kai-gitops-shard"]
    merge_call = only_call(merge_job["script"][0], "report")
    (files,) = parse_call(merge_call)[1]["files"]
    assert fnmatch.fnmatch(report, files)
    outputs = outputs_of(merge_call)
    assert merge_job["artifacts"]["reports"] == {"codequality": outputs["gitlab"], "junit": outputs["junit"]}
    assert merge_job["artifacts"]["when"] == "always"
    # the MR note step is gitlab-ci.yml's, which test_gitlab_note_step_posts_once_then_updates_its_own_note runs
    assert merge_job["after_script"] == load(GITLAB)["kai-gitops"]["after_script"]
    assert outputs["markdown"] == "kai-gitops-note.md"


@pytest.mark.parametrize(
    "script",
    [
        lambda: next(s["run"] for s in load(GITHUB_SHARDED)["jobs"]["shard"]["steps"] if "--shard" in s.get("run", "")),
        lambda: load(GITLAB_SHARDED)["kai-gitops-shard"]["script"][0],
    ],
)
@pytest.mark.parametrize(("exit_code", "passes"), [(0, True), (2, True), (1, False)])
def test_a_shard_fails_on_errors_only(tmp_path: Path, script: Any, exit_code: int, passes: bool) -> None:
    """Findings (exit 2) are the merge job's verdict; an error (exit 1) must fail the shard job."""
    fake = tmp_path / "kai-gitops"
    fake.write_text(f"#!/bin/sh\nexit {exit_code}\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script()], env=env, timeout=30)
    assert (done.returncode == 0) is passes


def _shard_repo(tmp_path: Path, values: str) -> Path:
    """The lab template repo with `values` as its KAI values file, and origin/main at its base commit."""
    from tests.support.helpers import make_repo, template_files

    repo, (base, _) = make_repo(tmp_path, template_files(), [{"clusters/lab/kai-values.yaml": values}])
    pygit2.Repository(str(repo)).references.create("refs/remotes/origin/main", pygit2.Oid(hex=base))
    return repo


_TAB_ERROR = "scheduler:\n\tplacementStrategy: spread\n"  # a YAML tab: an input error at line 2
_FINDING = "scheduler:\n  placementStrategy: spread\n"  # findings only (KAI-V-001 and more)


def _run(script: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=repo,
        env={**env, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("values", "stopped"), [(_TAB_ERROR, True), (_FINDING, False)])
def test_a_github_shard_stopped_by_an_error_annotates_it(tmp_path: Path, values: str, stopped: bool) -> None:
    """The shard's JSON report has no error form and the merge job does not run after a failed shard: the shard's
    own step shows the error as an annotation at its line and in the job summary, and only then (the merge job
    annotates findings, once)."""
    steps = load(GITHUB_SHARDED)["jobs"]["shard"]["steps"]
    check = next(s for s in steps if "--shard" in s.get("run", ""))
    summary = tmp_path / "summary.md"
    env = {
        "BASE_REF": "main",
        "SHARD": "1",
        "SHARDS": "1",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    repo = _shard_repo(tmp_path, values)
    done = _run(check["run"], repo, env)
    assert (done.returncode != 0) is stopped, done.stderr
    if not stopped:
        assert "::error" not in done.stdout and not summary.exists()
        assert (repo / "kai-gitops-shard.json").is_file()
        return
    assert done.stdout.count("::error") == 1
    assert (
        "::error file=clusters/lab/kai-values.yaml,line=2,col=1,title=kai-gitops check stopped on an error::"
        in done.stdout
    ), done.stdout
    assert "stopped on an error" in summary.read_text()


@pytest.mark.parametrize(("values", "stopped"), [(_TAB_ERROR, True), (_FINDING, False)])
def test_a_gitlab_shard_stopped_by_an_error_reports_it_to_the_mr(tmp_path: Path, values: str, stopped: bool) -> None:
    """GitLab: on an error the shard writes the Code Quality and JUnit error forms its job declares as reports
    (kept even when it fails), so the MR's widgets show the error at its line; on findings it writes neither."""
    job = load(GITLAB_SHARDED)["kai-gitops-shard"]
    reports, when = job["artifacts"]["reports"], job["artifacts"]["when"]
    assert when == "always"
    env = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1"}
    repo = _shard_repo(tmp_path, values)
    done = _run(job["script"][0], repo, env)
    assert (done.returncode != 0) is stopped, done.stderr
    if not stopped:
        assert not (repo / reports["codequality"]).exists() and not (repo / reports["junit"]).exists()
        return
    (issue,) = json.loads((repo / reports["codequality"]).read_text())
    assert issue["check_name"] == "input-error"
    assert issue["location"]["path"] == "clusters/lab/kai-values.yaml" and issue["location"]["lines"]["begin"] == 2
    assert "tabs are not allowed" in (repo / reports["junit"]).read_text()


# -- installing kai-gitops as copied: from its own Git repository, never from an index it is not on -------------

INSTALLING = ROOT / "docs" / "ci.md"
TEMPLATES = [GITHUB_SHARDED, GITLAB, GITLAB_SHARDED]  # github-actions.yml installs through the action


def install_steps(path: Path) -> list[tuple[dict[str, str], str]]:
    """(environment, script) of every step that runs pip, with the variables the CI system gives that step."""
    data = load(path)
    if path.name.startswith("github"):
        return [
            ({**data.get("env", {}), **job.get("env", {}), **step.get("env", {})}, step["run"])
            for job in data["jobs"].values()
            for step in job["steps"]
            if "pip" in step.get("run", "")
        ]
    return [
        ({**data.get("variables", {}), **job.get("variables", {})}, line)
        for job in data.values()
        if isinstance(job, dict) and "script" in job
        for line in job.get("before_script", [])
        if "pip" in line
    ]


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_every_template_installs_kai_gitops_from_its_git_repository(path: Path) -> None:
    steps = install_steps(path)
    assert steps, f"{path.name} installs nothing"
    for env, script in steps:
        assert script == 'python -m pip install "$KAI_GITOPS_INSTALL"'
        assert env["KAI_GITOPS_INSTALL"] == f"kai-gitops @ git+{PLACEHOLDER}@{release_ref()}"
    text = path.read_text()
    header = text[: text.index("\nname:" if path.name.startswith("github") else "\nvariables:")]
    assert PLACEHOLDER in header and "docs/ci.md#installing-kai-gitops" in header  # explained where it is seen
    assert "==" not in text.split("KAI_GITOPS_INSTALL:")[1].splitlines()[0]


def test_the_project_url_is_one_placeholder_everywhere_a_user_copies_it() -> None:
    copied = [*TEMPLATES, GITHUB, PRE_COMMIT, INSTALLING, ROOT / "README.md"]
    for path in copied:
        text = path.read_text()
        for stale in ("<your-org>", "example-org", "kai-gitops==", "https://…/kai-gitops"):
            assert stale not in text, f"{path.name} still says {stale}"
    hook_comment = PRE_COMMIT.read_text().split("\n- id:")[0]
    assert f"repo: {PLACEHOLDER}" in hook_comment and f"rev: {release_ref()}" in hook_comment
    docs = INSTALLING.read_text()
    assert "## Installing kai-gitops" in docs and docs.count(f"`{PLACEHOLDER}`") >= 1


def distinct_install_steps() -> list[tuple[dict[str, str], str]]:
    steps: list[tuple[dict[str, str], str]] = []
    for path in TEMPLATES:
        steps += [step for step in install_steps(path) if step not in steps]
    return steps


@pytest.mark.parametrize(("env", "script"), distinct_install_steps())
def test_the_install_step_installs_kai_gitops_from_a_local_clone(
    tmp_path: Path, local_release: Path, env: dict[str, str], script: str
) -> None:
    """The step exactly as a runner executes it, the placeholders replaced by a file:// URL of this repository and
    the tag of its clone."""
    venv_dir = throwaway_venv(tmp_path / "venv")
    step_env = {
        name: value.replace(PLACEHOLDER, local_release.as_uri()).replace(RELEASE_TAG, local_tag())
        for name, value in env.items()
    }
    base = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    run_env = (
        base
        | step_env
        | {"PATH": f"{venv_dir / 'bin'}:{os.environ['PATH']}", "PIP_NO_DEPS": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    )
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=run_env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    version = subprocess.run(
        [str(venv_dir / "bin" / "kai-gitops"), "--version"], env=base, capture_output=True, text=True, timeout=60
    )
    assert version.stdout.strip() == f"kai-gitops, version {local_tag().removeprefix('v')}", version.stderr
    where = subprocess.run(
        [str(venv_dir / "bin" / "python"), "-c", "import reconciler; print(reconciler.__file__)"],
        cwd=tmp_path,
        env=base,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv_dir.resolve())  # the clone's copy, not this checkout's


def test_the_github_workflow_templates_pass_actionlint(tmp_path: Path) -> None:
    """Every template, and the template's use of the action checked against action.yml itself: actionlint reads
    a local action's metadata (`uses: ./`, in a Git work tree) and refuses an input the action does not declare."""
    from tests.support.deploy_github_action import ACTION_INPUTS
    from tests.support.tools import require_tool

    actionlint = require_tool("actionlint")
    project = tmp_path / "project"
    (project / ".github" / "workflows").mkdir(parents=True)
    pygit2.init_repository(str(project))
    shutil.copy(ROOT / "action.yml", project / "action.yml")
    local = GITHUB.read_text().replace(f"<owner>/kai-gitops@{release_ref()}", "./")
    assert local != GITHUB.read_text()
    (project / ".github" / "workflows" / "kai-gitops.yml").write_text(local)
    every_input = local.replace(
        "          fail-on: warning", "\n".join(f"          {name}: x" for name in sorted(ACTION_INPUTS))
    )
    (project / ".github" / "workflows" / "every-input.yml").write_text(every_input)
    done = subprocess.run(
        [str(actionlint), "-no-color", str(GITHUB), str(GITHUB_SHARDED)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([str(actionlint), "-no-color"], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (project / ".github" / "workflows" / "misnamed.yml").write_text(local.replace("fail-on:", "fail_on:"))
    done = subprocess.run([str(actionlint), "-no-color"], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and 'input "fail_on" is not defined' in done.stdout, done.stdout + done.stderr
