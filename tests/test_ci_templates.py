"""The CI templates and pre-commit hooks users copy: they parse, and every kai-gitops call they make exists.

Each `kai-gitops …` command line is cut out of the shell, its `$VARIABLES` replaced by sample values, and
parsed by the real click command tree (options, choices and the -o callback), without running it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

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
    env = {"PATH": os.environ["PATH"], "CI_API_V4_URL": f"http://127.0.0.1:{server.server_port}/api/v4",
           "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "5", "KAI_GITOPS_GITLAB_TOKEN": "glpat-test"}
    try:
        for text in ("<!-- kai-gitops-report -->\nfirst run\n", "<!-- kai-gitops-report -->\nsecond run\n"):
            (tmp_path / "kai-gitops-note.md").write_text(text)
            subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, check=True, timeout=60)
        subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env | {"KAI_GITOPS_GITLAB_TOKEN": ""},
                       check=True, timeout=60)
    finally:
        server.shutdown()
    ours = [n for n in _NotesApi.notes if n["author"]["id"] == 7]
    assert [n["body"] for n in ours] == ["<!-- kai-gitops-report -->\nsecond run\n"]
    assert [c.split(" ")[0] for c in _NotesApi.calls] == ["GET", "GET", "POST", "GET", "GET", "PUT"]
    assert _NotesApi.notes[-1]["body"].endswith("someone else's")   # never edits another user's note
