"""Bad input as a person and a CI reviewer meet it: one line naming file:line:column and what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.helpers import assert_one_line_error, make_repo, run_cli, template_files

QUEUES = "clusters/lab/queues.yaml"
TAB_LINE = "clusters/lab/queues.yaml:9:1: invalid YAML: tabs are not allowed for indentation (indent with spaces)"


@pytest.fixture
def tab_repo(tmp_path: Path) -> Path:
    files = template_files((QUEUES, "    cpu:", "\tcpu:"))
    assert files[QUEUES] is not None and files[QUEUES].split("\n")[8].startswith("\tcpu:")
    return make_repo(tmp_path, files)[0]


def test_a_tab_is_one_line_saying_where_and_to_indent_with_spaces(tab_repo: Path) -> None:
    line = assert_one_line_error(*run_cli(["check", "--repo", tab_repo]), TAB_LINE)
    assert "cannot start any token" not in line and "while scanning" not in line


# -- in CI: the error where the reviewer looks ---------------------------------------------------------------

ANNOTATION = (
    "::error file=clusters/lab/queues.yaml,line=9,col=1,title=kai-gitops check stopped on an error::"
    "invalid YAML: tabs are not allowed for indentation (indent with spaces)\n"
)
SHA = "0123456789abcdef0123456789abcdef01234567"


def github_env(summary: Path) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_SHA": SHA,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "acme/gitops",
    }


def ci_outputs(out: Path) -> list[str]:
    return [
        "-o",
        "github",
        "-o",
        f"sarif={out}/r.sarif",
        "-o",
        f"gitlab={out}/cq.json",
        "-o",
        f"junit={out}/j.xml",
        "-o",
        f"markdown={out}/c.md",
        "-o",
        f"json={out}/r.json",
    ]


def test_in_ci_a_syntax_error_is_an_annotation_a_summary_entry_and_a_sarif_notification(
    tab_repo: Path, tmp_path: Path
) -> None:
    from tests.support.outputs_sarif_format import validator

    out, summary = tmp_path / "out", tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    code, stdout, stderr = run_cli(["check", "--repo", tab_repo, *ci_outputs(out)], env=github_env(summary))
    assert_one_line_error(code, stdout, stderr, TAB_LINE)
    assert stdout == ANNOTATION
    link = f"https://github.com/acme/gitops/blob/{SHA}/clusters/lab/queues.yaml#L9"
    assert summary.read_text() == (
        "# earlier step\n\n<!-- kai-gitops-report -->\n## kai-gitops check: ❌ stopped on an error\n\n"
        f"[clusters/lab/queues.yaml:9:1]({link}): invalid YAML: tabs are not allowed for indentation (indent "
        "with spaces)\n\nNothing was checked: the run stopped at this error. Fix it and run again.\n"
    )
    sarif = json.loads((out / "r.sarif").read_text())
    assert not list(validator().iter_errors(sarif))
    [run] = sarif["runs"]
    assert run["results"] == [] and run["automationDetails"]["id"] == "kai-gitops/check/(error)/"
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"] == TAB_LINE
    assert note["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": QUEUES, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 9, "startColumn": 1},
    }
    assert not (out / "r.json").exists()  # no report was made: nothing may read as one


def test_in_gitlab_a_syntax_error_is_one_blocker_code_quality_issue_with_a_stable_fingerprint(
    tab_repo: Path, tmp_path: Path
) -> None:
    issues = []
    for attempt in ("a", "b"):
        code, stdout, stderr = run_cli(
            ["check", "--repo", tab_repo, "-o", f"gitlab={tmp_path}/{attempt}.json"],
            env={"GITLAB_CI": "true", "CI": "true"},
        )
        assert_one_line_error(code, stdout, stderr, TAB_LINE)
        issues.append(json.loads((tmp_path / f"{attempt}.json").read_text()))
    [issue] = issues[0]
    assert issues[0] == issues[1]
    assert issue["check_name"] == "input-error" and issue["severity"] == "blocker"
    assert issue["location"] == {"path": QUEUES, "lines": {"begin": 9}}
    assert re.fullmatch(r"[0-9a-f]{32}", issue["fingerprint"])
    assert TAB_LINE.split(": ", 1)[1] in issue["description"]


def test_junit_and_markdown_say_the_run_stopped_on_the_error(tab_repo: Path, tmp_path: Path) -> None:
    from junitparser import Error, JUnitXml

    assert_one_line_error(
        *run_cli(["check", "--repo", tab_repo, "-o", f"junit={tmp_path}/j.xml", "-o", f"markdown={tmp_path}/c.md"]),
        TAB_LINE,
    )
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    [suite] = list(xml)
    [case] = list(suite)
    [error] = case.result
    assert isinstance(error, Error) and error.message == TAB_LINE and (xml.errors, xml.failures) == (1, 0)
    markdown = (tmp_path / "c.md").read_text()
    assert markdown.startswith("<!-- kai-gitops-report -->\n## kai-gitops check: ❌ stopped on an error")
    assert "clusters/lab/queues.yaml:9:1: invalid YAML: tabs are not allowed" in markdown


def test_an_error_without_a_line_is_an_annotation_without_a_place(tab_repo: Path, tmp_path: Path) -> None:
    code, stdout, stderr = run_cli(
        ["check", "--repo", tab_repo, "--ref", "no-such-branch", "-o", "github", "-o", f"sarif={tmp_path}/r.sarif"],
        env=github_env(tmp_path / "s.md"),
    )
    line = assert_one_line_error(code, stdout, stderr, "ref 'no-such-branch' does not exist")
    assert stdout == (
        f"::error title=kai-gitops check stopped on an error::{line.removeprefix('kai-gitops: error: ')}\n"
    )
    [note] = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "locations" not in note and "ref 'no-such-branch' does not exist" in note["message"]["text"]


def test_an_error_after_the_report_was_written_leaves_the_report_as_it_is(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, template_files())
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, stdout, stderr = run_cli(
        ["check", "--repo", repo, "-o", f"sarif={tmp_path}/r.sarif", "-o", f"gitlab={blocker}/cq.json"]
    )
    assert_one_line_error(code, stdout, stderr, "cannot write report")
    [run, *_] = json.loads((tmp_path / "r.sarif").read_text())["runs"]
    assert run["invocations"][0]["executionSuccessful"] is True and run["tool"]["driver"]["rules"]


def test_the_formats_a_ci_step_reads_have_an_error_form_and_the_others_none() -> None:
    from reconciler.core.errors import UserError
    from reconciler.outputs import FORMATS, render_error
    from reconciler.outputs.input_error import InputError

    error = InputError.of(UserError("refused", where="v.yaml:3"), "check")
    with_error_form = {fmt for fmt in FORMATS if render_error(error, fmt) is not None}
    assert with_error_form == {"sarif", "github", "gitlab", "junit", "markdown"}


def test_the_error_forms_carry_a_secret_only_redacted_and_hostile_text_only_as_data() -> None:
    from reconciler.core.errors import UserError
    from reconciler.outputs import FORMATS, render_error
    from reconciler.outputs.input_error import InputError
    from tests.support.outputs_shared import HOSTILE

    exc = UserError(f"refused --token=Zx81secretvalue9 {HOSTILE}", where="dir,a:b/v.yaml:3:4", hint="fix it")
    error = InputError.of(exc, "check")
    assert str(error.location) == "dir,a:b/v.yaml:3:4" and "<redacted>" in error.message
    rendered = {fmt: text for fmt in FORMATS if (text := render_error(error, fmt)) is not None}
    assert not any("Zx81secretvalue9" in str(text) for text in rendered.values())
    annotation = str(rendered["github"])
    assert annotation.count("\n") == 1 and annotation.startswith("::error file=dir%2Ca%3Ab/v.yaml,line=3,col=4,")
    assert "<img" not in str(rendered["markdown"]) and "@admin" not in str(rendered["markdown"])


# -- uncommitted edits: the run says it read the commit --------------------------------------------------------

NOT_CI: dict[str, str | None] = {"CI": None, "GITHUB_ACTIONS": None, "GITLAB_CI": None}
EDIT_HINT = (
    "kai-gitops: warning: clusters/lab/queues.yaml has uncommitted edits this run did not read: it "
    "checked HEAD (commit them, or pass --worktree to check the working tree)"
)


def edited_repo(tmp_path: Path) -> Path:
    """The template, committed; then its queue file edited in the working tree (gpu quota 8 → 4)."""
    repo, _ = make_repo(tmp_path, template_files())
    queues = repo / QUEUES
    queues.write_text(queues.read_text().replace("gpu: {quota: 8,", "gpu: {quota: 4,", 1))
    return repo


def test_check_says_in_one_line_that_edited_files_were_read_at_the_commit(tmp_path: Path) -> None:
    repo = edited_repo(tmp_path)
    assert run_cli(["check", "--repo", repo], env=NOT_CI)[2].splitlines() == [EDIT_HINT]
    assert run_cli(["check", "--repo", repo, "--worktree"], env=NOT_CI)[2] == ""


def test_several_edited_files_are_counted_and_the_first_three_named(tmp_path: Path) -> None:
    repo = edited_repo(tmp_path)
    for name in ("kai-gitops.yaml", "environments/prod.yaml", "clusters/lab/kai-values.yaml"):
        (repo / name).write_text((repo / name).read_text() + "# edited\n")
    assert run_cli(["check", "--repo", repo], env=NOT_CI)[2].splitlines() == [
        "kai-gitops: warning: 4 files (clusters/lab/kai-values.yaml, clusters/lab/queues.yaml, "
        "environments/prod.yaml, +1 more) have uncommitted edits this run did not read: it checked HEAD (commit "
        "them, or pass --worktree to check the working tree)"
    ]


@pytest.mark.parametrize("ci", [{"CI": "true"}, {"GITHUB_ACTIONS": "true"}, {"GITLAB_CI": "true"}])
def test_in_ci_the_working_tree_is_the_commit_and_nothing_is_said(tmp_path: Path, ci: dict[str, str]) -> None:
    repo = edited_repo(tmp_path)
    env = {**NOT_CI, **ci}
    assert run_cli(["check", "--repo", repo], env=env)[2] == ""


def test_a_syntax_error_fixed_but_not_committed_is_named_before_the_error(tab_repo: Path) -> None:
    queues = tab_repo / QUEUES
    queues.write_text(queues.read_text().replace("\tcpu:", "    cpu:", 1))
    code, _, stderr = run_cli(["check", "--repo", tab_repo], env=NOT_CI)
    assert code == 1 and stderr.splitlines() == [EDIT_HINT, f"kai-gitops: error: {TAB_LINE}"]
    assert run_cli(["check", "--repo", tab_repo, "--worktree"], env=NOT_CI)[0] != 1


def test_diff_names_only_the_edited_files_it_read(tmp_path: Path) -> None:
    from tests.support.helpers import DEMO_SNAPSHOTS, load_demo_builder

    demo = tmp_path / "demo"
    load_demo_builder().build_repo(demo)
    # prod-addon reads the config, its environment and the waivers; the lab cluster's queues are not its own
    for name in ("kai-gitops.yaml", "environments/prod.yaml", "kai-gitops-waivers.yaml", QUEUES):
        (demo / name).write_text((demo / name).read_text() + "# edited\n")
    code, _, stderr = run_cli(
        ["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", DEMO_SNAPSHOTS / "prod-addon.yaml"],
        env=NOT_CI,
    )
    assert code == 2
    assert stderr.splitlines() == [
        "kai-gitops: warning: 3 files (environments/prod.yaml, kai-gitops-waivers.yaml, kai-gitops.yaml) have "
        "uncommitted edits this run did not read: it checked HEAD (commit them, or pass --worktree to check the "
        "working tree)"
    ]


def test_another_ref_than_the_checked_out_commit_is_not_about_the_edits(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path, template_files(), [{"README.md": "later\n"}])
    (repo / QUEUES).write_text((repo / QUEUES).read_text() + "# edited\n")
    assert run_cli(["check", "--repo", repo, "--ref", commits[0]], env=NOT_CI)[2] == ""
    assert run_cli(["check", "--repo", repo], env=NOT_CI)[2] != ""


# -- a repository that is not (yet) a GitOps repository ---------------------------------------------------------------


def test_a_repository_with_no_commit_says_no_commits_yet(tmp_path: Path) -> None:
    import pygit2

    pygit2.init_repository(str(tmp_path))
    (tmp_path / "kai-gitops.yaml").write_text("clusters: []\n")
    line = assert_one_line_error(*run_cli(["check", "--repo", tmp_path]), "no commits yet", "commit")
    assert "'HEAD' does not exist" not in line
