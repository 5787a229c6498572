"""`--k8s-audit-log`: who last wrote each drifted object, from the API server's audit log (docs/drift.md)."""

from __future__ import annotations

import gzip
import json
import os
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reconciler.app.last_writes import classify
from reconciler.findings.age import format_instant
from reconciler.findings.last_write import Identity
from reconciler.model.config import AuditIdentities
from reconciler.publish.drift_issue import DriftContext, render_drift_body
from reconciler.report.reader import report_from_dict
from reconciler.sources.snapshot import TAKEN_AT_ANNOTATION
from tests.support.audit_log import (
    APISERVER,
    HELM,
    HELM_BY_HAND,
    KAI_GITOPS,
    OPERATOR,
    PERSON,
    QUEUES,
    START,
    Writer,
    line,
    request,
    story,
    write_log,
)
from tests.support.helpers import (
    DEMO_SNAPSHOTS,
    assert_one_line_error,
    commit_files,
    load_demo_builder,
    run_cli,
)

SNAPSHOT = DEMO_SNAPSHOTS / "prod-addon.yaml"
PERSON_LINE = (
    "⚠ last written by alice@example.com (person) via kubectl/v1.36.0 (linux/amd64) kubernetes/0b3f2e1 "
    "from 10.0.0.7 at 2026-11-30 13:56 UTC"
)


def taken_at(snapshot: Path, stamp: str) -> str:
    """The demo snapshot's text as `kai-gitops snapshot` writes it, saying when it was taken."""
    text = snapshot.read_text()
    said = re.search(rf"^    {re.escape(TAKEN_AT_ANNOTATION)}: .*$", text, flags=re.MULTILINE)
    assert said, "the demo snapshot says when it was taken"
    return text[: said.start()] + f'    {TAKEN_AT_ANNOTATION}: "{stamp}"' + text[said.end() :]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo repo; beside it, the demo snapshot as taken now (the log's story is before it)."""
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    (target.parent / "snapshot.yaml").write_text(taken_at(SNAPSHOT, now))
    return target


def diff(
    demo: Path, *args: Any, fmt: str = "json", command: str = "diff", snapshot: Path | None = None
) -> tuple[int, str, str]:
    return run_cli(
        [
            command,
            "--repo",
            demo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            snapshot or demo.parent / "snapshot.yaml",
            "-o",
            fmt,
            *args,
        ]
    )


def last_writes(stdout: str) -> dict[str, Any]:
    return {
        f["subject"]["name"]: f.get("lastWrite")
        for f in json.loads(stdout)["findings"]
        if f["kind"] == "drift" and f["rule"] == "KAI-D-002"
    }


def person_id(events: list[dict[str, Any]]) -> str:
    """The auditID of the person's successful update: the one the finding must name."""
    return next(
        e["auditID"]
        for e in events
        if e["user"]["username"] == PERSON.username and e["verb"] == "update" and e["stage"] == "ResponseComplete"
    )


# -- who: a person among ServiceAccounts and the operator ---------------------------------------------------------


def test_a_persons_edit_is_named_among_service_accounts_and_the_operator(demo: Path, tmp_path: Path) -> None:
    events = list(story())  # Helm, the operator, the API server, kai-gitops; then alice; then a 403 and a status write
    log = write_log(tmp_path / "audit.log", events)
    code, stdout, stderr = diff(demo, "--k8s-audit-log", log)
    assert (code, stderr) == (2, "")
    written = last_writes(stdout)
    assert written["default-queue"] == {
        "user": "alice@example.com",
        "groups": ["oidc:platform-admins", "system:authenticated"],
        "userAgent": "kubectl/v1.36.0 (linux/amd64) kubernetes/0b3f2e1",
        "sourceIP": "10.0.0.7",
        "time": "2026-11-30T13:56:00.004000Z",
        "verb": "update",
        "identity": "person",
        "auditID": person_id(events),
        "impersonatedBy": None,
        "caveat": None,
    }
    assert written["default-parent-queue"] is None  # the log never saw it written


def test_text_and_markdown_mark_the_persons_change(demo: Path, tmp_path: Path) -> None:
    log = write_log(tmp_path / "audit.log", story())
    _, text, _ = diff(demo, "--k8s-audit-log", log, fmt="text")
    assert PERSON_LINE in text
    _, markdown, _ = diff(demo, "--k8s-audit-log", log, fmt="markdown")
    assert "- **⚠ last written by alice@&#8203;example.com (person) via kubectl/v1.36.0" in markdown


@pytest.mark.parametrize(
    ("writer", "identity"),
    [
        (OPERATOR, "gitops"),
        (KAI_GITOPS, "gitops"),
        (HELM, "person"),
        (APISERVER, "system"),
        (PERSON, "person"),
        (HELM_BY_HAND, "person"),
    ],
)
def test_each_writer_is_classed(demo: Path, tmp_path: Path, writer: Writer, identity: str) -> None:
    last = request(writer, "patch", QUEUES, "default-queue", START + timedelta(days=1))
    log = write_log(tmp_path / "audit.log", [*story(), *last])
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    written = last_writes(stdout)["default-queue"]
    assert (written["user"], written["identity"], written["verb"]) == (writer.username, identity, "patch")
    _, text, _ = diff(demo, "--k8s-audit-log", log, fmt="text")
    assert ("⚠ last written by" in text) is (identity == "person")


def test_failed_writes_reads_and_status_updates_are_not_writes(demo: Path, tmp_path: Path) -> None:
    at = START + timedelta(days=1)
    later = [
        *request(PERSON, "update", QUEUES, "default-queue", at, code=403),
        *request(PERSON, "update", QUEUES, "default-queue", at, code=409),
        *request(PERSON, "get", QUEUES, "default-queue", at),
        *request(PERSON, "update", QUEUES, "default-queue", at, subresource="status"),
    ]
    log = write_log(tmp_path / "audit.log", [*request(OPERATOR, "update", QUEUES, "default-queue", START), *later])
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    assert last_writes(stdout)["default-queue"]["user"] == OPERATOR.username


def test_the_impersonated_user_is_named_and_who_impersonated(demo: Path, tmp_path: Path) -> None:
    sudo = Writer("alice@example.com", (), "kubectl/v1.36.0", "10.0.0.7", impersonates=OPERATOR.username)
    log = write_log(tmp_path / "audit.log", request(sudo, "patch", QUEUES, "default-queue", START))
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    written = last_writes(stdout)["default-queue"]
    # Named as the API server authorized it, classed as who sent it: a person with `kubectl --as` stands out.
    assert (written["user"], written["identity"], written["impersonatedBy"]) == (
        OPERATOR.username,
        "person",
        "alice@example.com",
    )
    _, text, _ = diff(demo, "--k8s-audit-log", log, fmt="text")
    assert f"⚠ last written by {OPERATOR.username} (person) impersonated by alice@example.com via" in text


def test_writes_after_the_run_started_are_not_counted(demo: Path, tmp_path: Path) -> None:
    future = datetime.now(UTC) + timedelta(days=1)
    log = write_log(tmp_path / "audit.log", [*story(), *request(OPERATOR, "update", QUEUES, "default-queue", future)])
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    assert last_writes(stdout)["default-queue"]["user"] == PERSON.username


def test_a_snapshot_cuts_the_log_off_when_it_was_taken(demo: Path, tmp_path: Path) -> None:
    """kai-gitops (or anyone) writing after the snapshot did not make what it shows: alice did, before it."""
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(taken_at(SNAPSHOT, "2026-11-30T14:30:00.000000Z"))  # after the story, before the repair
    repair = request(KAI_GITOPS, "patch", QUEUES, "default-queue", START + timedelta(hours=2))
    log = write_log(tmp_path / "audit.log", [*story(), *repair])
    _, stdout, _ = diff(demo, "--k8s-audit-log", log, snapshot=snapshot)
    written = last_writes(stdout)["default-queue"]
    assert (written["user"], written["identity"], written["caveat"]) == (PERSON.username, "person", None)


def test_a_snapshot_that_does_not_say_when_it_was_taken_says_a_later_write_may_be_counted(
    demo: Path, tmp_path: Path
) -> None:
    log = write_log(tmp_path / "audit.log", story())
    untimed = tmp_path / "snapshot.yaml"  # as kubectl get -o yaml: no time
    untimed.write_text(re.sub(r"^metadata:\n(  .*\n)+", "metadata: {}\n", SNAPSHOT.read_text(), flags=re.MULTILINE))
    _, stdout, _ = diff(demo, "--k8s-audit-log", log, snapshot=untimed)
    caveat = "the snapshot does not say when it was taken: this write may be after it"
    assert last_writes(stdout)["default-queue"]["caveat"] == caveat
    _, text, _ = diff(demo, "--k8s-audit-log", log, snapshot=untimed, fmt="text")
    assert f"{PERSON_LINE} ({caveat})" in text


@pytest.mark.parametrize("stamp", ["yesterday", "2026-11-30T14:30:00", "2026-13-30T14:30:00Z"])
def test_a_wrong_taken_at_is_one_line_error(demo: Path, tmp_path: Path, stamp: str) -> None:
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(taken_at(SNAPSHOT, stamp))
    code, stdout, stderr = diff(demo, snapshot=snapshot)
    assert_one_line_error(
        code, stdout, stderr, f"{snapshot}:", f"annotation {TAKEN_AT_ANNOTATION} is not an RFC 3339 time"
    )


def test_rotated_logs_are_compared_by_time_not_by_order(demo: Path, tmp_path: Path) -> None:
    older = write_log(tmp_path / "audit-old.log", request(PERSON, "update", QUEUES, "default-queue", START))
    newer = write_log(
        tmp_path / "audit.log", request(OPERATOR, "update", QUEUES, "default-queue", START + timedelta(hours=1))
    )
    _, stdout, _ = diff(demo, "--k8s-audit-log", newer, "--k8s-audit-log", older)
    assert last_writes(stdout)["default-queue"]["user"] == OPERATOR.username


def test_a_directory_is_the_log_and_its_rotated_backups(demo: Path, tmp_path: Path) -> None:
    """The CronJob mounts the API server's log folder: the live log and the backups it rotated to (gzip or not)."""
    folder = tmp_path / "audit"
    folder.mkdir()
    write_log(folder / "audit-2026-11-30T12-00-00.000.log", request(PERSON, "update", QUEUES, "default-queue", START))
    newer = write_log(
        tmp_path / "audit.log", request(OPERATOR, "update", QUEUES, "default-queue", START + timedelta(hours=1))
    )
    (folder / "audit.log.gz").write_bytes(gzip.compress(Path(newer).read_bytes()))
    (folder / ".hidden").write_text("not a log")
    (folder / "nested").mkdir()
    _, stdout, stderr = diff(demo, "--k8s-audit-log", folder)
    assert last_writes(stdout)["default-queue"]["user"] == OPERATOR.username, stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, stderr = diff(demo, "--k8s-audit-log", empty)
    assert code == 1 and "is a directory with no log file in it" in stderr and str(empty) in stderr


def test_an_object_the_logs_never_saw_written_says_so(demo: Path, tmp_path: Path) -> None:
    """Read and not found is said per object, in every format that names writers; not read says nothing."""
    log = write_log(tmp_path / "audit.log", request(PERSON, "update", QUEUES, "default-queue", START))
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    found = {
        f["subject"]["name"]: f.get("noWriteFound")
        for f in json.loads(stdout)["findings"]
        if f["kind"] == "drift" and f["rule"] == "KAI-D-002"
    }
    assert found["default-queue"] is None and found["default-parent-queue"]["files"] == 1
    _, text, _ = diff(demo, "--k8s-audit-log", log, fmt="text")
    parent = text.split("Queue/default-parent-queue", 1)[1].split("\n  ~ ", 1)[0]
    assert "no write to it in 1 audit log file up to " in parent
    _, markdown, _ = diff(demo, "--k8s-audit-log", log, fmt="markdown")
    assert "- no write to it in 1 audit log file up to " in markdown
    _, unread, _ = diff(demo, fmt="text")
    assert "no write to it" not in unread


def test_a_helm_release_is_attributed_through_its_revision_secrets() -> None:
    from reconciler.app.last_writes import audit_target
    from reconciler.core.refs import release_ref
    from reconciler.sources.audit_log import AuditTarget

    target = audit_target(release_ref("kai-scheduler", "kai-scheduler"))
    assert target == AuditTarget("", "secrets", "kai-scheduler", "sh.helm.release.v1.kai-scheduler.v", prefix=True)
    assert target.matches(
        {"resource": "secrets", "namespace": "kai-scheduler", "name": "sh.helm.release.v1.kai-scheduler.v7"}
    )
    assert not target.matches(
        {"resource": "secrets", "namespace": "other", "name": "sh.helm.release.v1.kai-scheduler.v7"}
    )


# -- identities: the defaults and kai-gitops.yaml ----------------------------------------------------------------


NODE_GROUPS = ("system:nodes", "system:authenticated")
SA_GROUPS = ("system:serviceaccounts", "system:authenticated")


@pytest.mark.parametrize(
    ("user", "groups", "agent", "identity"),
    [
        ("system:apiserver", ("system:masters",), None, Identity.SYSTEM),
        ("system:kube-controller-manager", (), None, Identity.SYSTEM),
        ("system:kube-scheduler", (), None, Identity.SYSTEM),
        ("system:node:gpu-1", NODE_GROUPS, "kubelet/v1.36.0", Identity.SYSTEM),
        ("system:serviceaccount:kube-system:generic-garbage-collector", SA_GROUPS, None, Identity.SYSTEM),
        ("system:serviceaccount:kai-scheduler:kai-operator", SA_GROUPS, None, Identity.GITOPS),
        ("system:serviceaccount:kai-scheduler:binder", SA_GROUPS, None, Identity.SYSTEM),
        ("system:serviceaccount:kai-gitops:kai-gitops", SA_GROUPS, None, Identity.GITOPS),
        ("system:serviceaccount:argocd:argocd-application-controller", SA_GROUPS, None, Identity.GITOPS),
        ("system:serviceaccount:flux-system:helm-controller", SA_GROUPS, None, Identity.GITOPS),
        # forged: a name like ours in a tenant's namespace, a tool's user agent sent by any ServiceAccount
        ("system:serviceaccount:team-a:kai-gitops", SA_GROUPS, "kai-gitops/0.1 (reconciler)", Identity.PERSON),
        ("system:serviceaccount:ci:deployer", SA_GROUPS, "Helm/3.19.0", Identity.PERSON),
        ("system:serviceaccount:team-a:runner", SA_GROUPS, "kai-gitops/0.1 (reconciler)", Identity.PERSON),
        # forged: a `system:` login that is no component of upstream Kubernetes (OpenShift's, MicroK8s's admin),
        # and a node's name without the nodes' group
        ("system:admin", ("system:masters", "system:authenticated"), "oc/4.16.0", Identity.PERSON),
        ("system:admin", ("system:authenticated",), "kubectl/v1.36.0", Identity.PERSON),
        ("system:node:gpu-1", ("system:authenticated",), "kubelet/v1.36.0", Identity.PERSON),
        ("system:masters", ("system:masters",), None, Identity.PERSON),
        # a user agent is self-declared: it never makes anyone a tool
        ("ci-deployer", (), "Helm/3.19.0", Identity.PERSON),
        ("alice@example.com", (), "Helm/3.16.0", Identity.PERSON),
        ("bob", (), "kai-gitops/0.1 (reconciler)", Identity.PERSON),
        ("system:serviceaccount:team-a:deployer", SA_GROUPS, None, Identity.PERSON),  # on no list: it stands out
        ("bob", (), "kubectl/v1.36.0", Identity.PERSON),
    ],
)
def test_default_identities(user: str, groups: tuple[str, ...], agent: str | None, identity: Identity) -> None:
    assert classify(user, agent, AuditIdentities(), groups) is identity


def test_helm_is_known_by_its_users_identity_and_the_field_manager_not_its_user_agent() -> None:
    """{user, userAgent, fieldManager}: the CI account's Helm runs where Helm owns the drifted fields; the same
    account's hand edit, or anyone else sending Helm's user agent and owning fields as `helm`, is a person."""
    from reconciler.model.config import IdentityPattern
    from reconciler.sources.repoconfig import parse_repo_config

    text = (
        b"apiVersion: kai-gitops/v1\nclusters:\n  - {name: a, mode: addon, kaiChartVersion: v0.16.7, "
        b"environmentFile: e.yaml}\naudit:\n  identities:\n    gitops:\n"
        b"      - {user: 'system:serviceaccount:ci:deployer', userAgent: 'Helm/*', fieldManager: helm}\n"
    )
    identities = parse_repo_config(text).audit_identities
    assert identities.gitops[-1] == IdentityPattern("system:serviceaccount:ci:deployer", "Helm/*", "helm")
    ci = "system:serviceaccount:ci:deployer"
    assert classify(ci, "Helm/3.19.0", identities, SA_GROUPS, ("helm",)) is Identity.GITOPS
    assert classify(ci, "Helm/3.19.0", identities, SA_GROUPS, ("kubectl-edit",)) is Identity.PERSON
    assert classify(ci, "Helm/3.19.0", identities, SA_GROUPS, ()) is Identity.PERSON
    assert classify(ci, "kubectl/v1.36.0", identities, SA_GROUPS, ("helm",)) is Identity.PERSON
    assert (
        classify("system:serviceaccount:team-a:runner", "Helm/3.19.0", identities, SA_GROUPS, ("helm",))
        is Identity.PERSON
    )


def test_the_identity_the_run_authenticates_as_is_the_tools_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart installed under another release name and namespace: its ServiceAccount is known by the pod's
    token, not by a name pattern; the same name in another namespace stays a person."""
    import base64

    from reconciler.app.last_writes import identities_of_run
    from reconciler.model.live import LiveState
    from reconciler.sources.cluster import cluster_source
    from reconciler.sources.cluster.kubeconfig import IN_CLUSTER_LABEL, SERVICE_ACCOUNT_DIR_ENV

    ours = "system:serviceaccount:ops:gitops-kai-gitops"
    claims = base64.urlsafe_b64encode(json.dumps({"sub": ours}).encode()).decode().rstrip("=")
    (tmp_path / "token").write_text(f"eyJhbGciOiJSUzI1NiJ9.{claims}.c2lnbmF0dXJl\n")
    monkeypatch.setenv(SERVICE_ACCOUNT_DIR_ENV, str(tmp_path))
    in_pod = identities_of_run(AuditIdentities(), LiveState(cluster_source(IN_CLUSTER_LABEL)))
    assert in_pod.running_as == (ours,)
    assert classify(ours, "kai-gitops/0.1", in_pod, SA_GROUPS) is Identity.GITOPS
    assert classify("system:serviceaccount:team-a:gitops-kai-gitops", None, in_pod, SA_GROUPS) is Identity.PERSON
    assert classify(ours, None, AuditIdentities(), SA_GROUPS) is Identity.PERSON  # not in its pod: not known
    # a kubeconfig's connection, or a snapshot, is not the pod's token: nothing is added
    assert identities_of_run(AuditIdentities(), LiveState(cluster_source("context prod"))).running_as == ()
    snapshot = LiveState(cluster_source(IN_CLUSTER_LABEL))
    snapshot.from_snapshot = True
    assert identities_of_run(AuditIdentities(), snapshot).running_as == ()
    for token in ("not-a-jwt", "a.!!!.c", "a." + base64.urlsafe_b64encode(b'{"sub": "alice"}').decode() + ".c"):
        (tmp_path / "token").write_text(token)
        assert identities_of_run(AuditIdentities(), LiveState(cluster_source(IN_CLUSTER_LABEL))) == AuditIdentities()


def test_kai_gitops_yaml_adds_identities_to_the_defaults(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    config = (repo / "kai-gitops.yaml").read_text()
    commit_files(
        repo,
        {
            "kai-gitops.yaml": config + "audit:\n  identities:\n    gitops:\n      - alice@*\n"
            "      - {user: 'ci-*', userAgent: 'argocd/*'}\n"
        },
    )
    operator = request(OPERATOR, "update", QUEUES, "default-parent-queue", START)
    log = write_log(tmp_path / "audit.log", [*story(), *operator])
    _, stdout, _ = diff(repo, "--k8s-audit-log", log, snapshot=SNAPSHOT)
    written = last_writes(stdout)
    assert written["default-queue"]["identity"] == "gitops"  # alice, listed
    assert written["default-parent-queue"]["identity"] == "gitops"  # the operator, still listed by default


def test_a_person_running_helm_is_named_as_a_person_with_the_tool(demo: Path, tmp_path: Path) -> None:
    last = request(HELM_BY_HAND, "patch", QUEUES, "default-queue", START + timedelta(days=1))
    log = write_log(tmp_path / "audit.log", [*story(), *last])
    _, text, _ = diff(demo, "--k8s-audit-log", log, fmt="text")
    assert "⚠ last written by alice@example.com (person) via Helm/3.16.0 from 10.0.0.7" in text


def test_a_user_is_classed_by_its_tool_only_when_both_are_named(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    config = (repo / "kai-gitops.yaml").read_text()
    commit_files(
        repo,
        {
            "kai-gitops.yaml": config + "audit:\n  identities:\n    gitops:\n"
            "      - {user: 'ci-*', userAgent: 'Helm/*'}\n"
        },
    )
    ci_helm = Writer("ci-deployer", ("ci",), "Helm/3.19.0", "10.0.3.3")
    ci_kubectl = Writer("ci-deployer", ("ci",), "kubectl/v1.36.0", "10.0.3.3")
    log = write_log(
        tmp_path / "audit.log",
        [
            *story(),
            *request(ci_helm, "patch", QUEUES, "default-queue", START + timedelta(days=1)),
            *request(ci_kubectl, "patch", QUEUES, "default-parent-queue", START + timedelta(days=1)),
        ],
    )
    later = tmp_path / "snapshot.yaml"  # taken after those writes
    later.write_text(taken_at(SNAPSHOT, format_instant(START + timedelta(days=2))))
    _, stdout, _ = diff(repo, "--k8s-audit-log", log, snapshot=later)
    written = last_writes(stdout)
    assert written["default-queue"]["identity"] == "gitops"  # ci-deployer, by Helm: both named
    assert written["default-parent-queue"]["identity"] == "person"  # ci-deployer, by hand


def test_the_schema_command_describes_audit_identities() -> None:
    code, stdout, _ = run_cli(["schema"])
    identities = json.loads(stdout)["properties"]["audit"]["properties"]["identities"]
    assert code == 0 and set(identities["properties"]) == {"gitops", "system"}
    assert "KAI operator" in identities["description"]


@pytest.mark.parametrize(
    ("block", "needles"),
    [
        ("    person: [bob]\n", ("unknown key(s) 'person' in audit.identities", "allowed: gitops, system")),
        (
            "    gitops:\n      - agent: 'x/*'\n",
            ("unknown key(s) 'agent' in audit.identities.gitops.0", "allowed: fieldManager, user, userAgent"),
        ),
        ("    system: [3]\n", ("audit.identities.system.0: 3 is not of type 'string', 'object'",)),
        ("    gitops:\n      - userAgent: 'Helm/*'\n", ("audit.identities.gitops.0", "'user' is a required property")),
        (
            "    gitops:\n      - {user: 'ci-*'}\n",
            ("audit.identities.gitops.0: an entry with `user` alone is the username as a string",),
        ),
    ],
)
def test_a_wrong_identity_entry_is_one_line_error(tmp_path: Path, block: str, needles: tuple[str, ...]) -> None:
    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    config = (repo / "kai-gitops.yaml").read_text()
    commit_files(repo, {"kai-gitops.yaml": config + "audit:\n  identities:\n" + block})
    code, stdout, stderr = run_cli(["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", SNAPSHOT])
    assert_one_line_error(code, stdout, stderr, "kai-gitops.yaml:3", *needles)


# -- the file: gzip, malformed lines, not an audit log -----------------------------------------------------------


def test_gzip_is_read_by_its_magic_bytes_whatever_its_name(demo: Path, tmp_path: Path) -> None:
    events = list(story())
    log = write_log(tmp_path / "audit.log", events, compress=True)  # no .gz: rotated logs get renamed
    code, stdout, stderr = diff(demo, "--k8s-audit-log", log)
    assert (code, stderr) == (2, "")
    assert last_writes(stdout)["default-queue"]["auditID"] == person_id(events)


def test_malformed_lines_are_counted_and_skipped_with_one_warning(demo: Path, tmp_path: Path) -> None:
    events = [line(e) for e in story()]
    torn = events[5][: len(events[5]) // 2] + b"\n"  # a write cut short
    not_json = b'{"kind":"Event","stage":"ResponseComplete","verb":"update","objectRef":{"name":"default-queue",}}\n'
    log = tmp_path / "audit.log"
    log.write_bytes(b"".join([*events[:5], torn, b"\n", *events[5:10], not_json, b"garbage\n", *events[10:]]))
    code, stdout, stderr = diff(demo, "--k8s-audit-log", log)
    assert code == 2
    assert last_writes(stdout)["default-queue"]["user"] == PERSON.username
    warnings = [w for w in stderr.splitlines() if "malformed" in w]
    assert len(warnings) == 1, stderr
    assert f"{log}:6: 3 malformed audit log line(s) skipped" in warnings[0]


@pytest.mark.parametrize(
    "content",
    [
        b"hello\n",
        b'{"kind":"Pod","apiVersion":"v1"}\n',
        b"\x00\x01\x02binary\xff",
        gzip.compress(b"not an audit log\n"),
    ],
)
def test_a_file_that_is_no_audit_log_is_one_line_error(demo: Path, tmp_path: Path, content: bytes) -> None:
    log = tmp_path / "app.log"
    log.write_bytes(content)
    code, stdout, stderr = diff(demo, "--k8s-audit-log", log)
    assert_one_line_error(code, stdout, stderr, f"{log}:1: is not a Kubernetes audit log")


def test_an_unreadable_file_is_one_line_error(demo: Path, tmp_path: Path) -> None:
    for path, why in [(tmp_path / "missing.log", "No such file")]:  # a directory: its log files (a test above)
        code, stdout, stderr = diff(demo, "--k8s-audit-log", path)
        assert_one_line_error(code, stdout, stderr, f"{path}: cannot read the audit log", why)


@pytest.mark.parametrize("compress", [False, True])
def test_a_pipe_is_refused_before_it_is_read(demo: Path, tmp_path: Path, compress: bool) -> None:
    """A FIFO (what `/dev/stdin` and `<(zcat …)` are) can be read once; the log is read twice. The writer is
    never read from: the refusal comes before the pipe is opened, so the run neither blocks nor half-reads it."""
    plain = b"".join(line(e) for e in story())
    data = gzip.compress(plain) if compress else plain
    fifo = tmp_path / "audit.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(data,), daemon=True)
    writer.start()
    code, stdout, stderr = diff(demo, "--k8s-audit-log", fifo)
    with fifo.open("rb") as drain:  # let the writer finish
        assert drain.read() == data
    writer.join(timeout=10)
    assert_one_line_error(
        code, stdout, stderr, f"{fifo}: is not a regular file: pass the log's path; a pipe can be read only once"
    )


def test_a_gzip_log_cut_short_is_one_line_error(demo: Path, tmp_path: Path) -> None:
    whole = gzip.compress(b"".join(line(e) for e in story()))
    log = tmp_path / "audit.log.gz"
    log.write_bytes(whole[: len(whole) - 40])
    code, stdout, stderr = diff(demo, "--k8s-audit-log", log)
    assert_one_line_error(code, stdout, stderr, f"{log}: the gzip stream is damaged or cut short")


def test_an_empty_log_names_no_one(demo: Path, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_bytes(b"")
    code, stdout, _ = diff(demo, "--k8s-audit-log", log)
    assert code == 2
    assert last_writes(stdout) == {"default-queue": None, "default-parent-queue": None}


# -- redaction, every surface -------------------------------------------------------------------------------------


def test_user_agents_and_usernames_are_redacted(demo: Path, tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4" * 5
    leaky = Writer(f"bob token={token}", (), f"curl/8.5 Authorization: Bearer {token}", "10.0.0.8")
    log = write_log(tmp_path / "audit.log", request(leaky, "patch", QUEUES, "default-queue", START))
    for fmt in ("json", "text", "markdown"):
        _, out, _ = diff(demo, "--k8s-audit-log", log, fmt=fmt)
        assert token not in out, fmt
        assert "curl/8.5" in out, fmt


def test_a_megabyte_user_agent_is_bounded(demo: Path, tmp_path: Path) -> None:
    huge = Writer("bob", tuple(f"group-{i}" for i in range(500)), "kubectl/" + "x" * 1_000_000, "10.0.0.8")
    log = write_log(tmp_path / "audit.log", request(huge, "patch", QUEUES, "default-queue", START))
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    written = last_writes(stdout)["default-queue"]
    assert written["userAgent"].startswith("kubectl/xxx") and "truncated" in written["userAgent"]
    assert len(written["userAgent"]) <= 8192 and len(written["groups"]) == 50


def test_the_drift_issue_and_a_saved_report_keep_the_last_write(demo: Path, tmp_path: Path) -> None:
    log = write_log(tmp_path / "audit.log", story())
    _, stdout, _ = diff(demo, "--k8s-audit-log", log)
    saved = json.loads(stdout)
    report = report_from_dict(saved)
    assert report.to_dict() == saved
    cluster = report.clusters[0]
    body = render_drift_body(cluster, [f.redacted() for f in cluster.active()], DriftContext(("kai-gitops",)))
    assert "- **⚠ last written by alice@&#8203;example.com (person) via kubectl/v1.36.0" in body


def test_doctor_and_reconcile_take_the_log(demo: Path, tmp_path: Path) -> None:
    log = write_log(tmp_path / "audit.log", story())
    _, stdout, _ = diff(demo, "--k8s-audit-log", log, command="reconcile")
    assert last_writes(stdout)["default-queue"]["user"] == PERSON.username
    _, text, _ = diff(demo, "--k8s-audit-log", log, command="reconcile", fmt="text")
    assert f"Queue/default-queue: {PERSON_LINE}" in text
    _, out, err = run_cli(
        [
            "doctor",
            "--repo",
            demo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            SNAPSHOT,
            "-o",
            "json",
            "--k8s-audit-log",
            log,
        ]
    )
    assert last_writes(out)["default-queue"]["user"] == PERSON.username, err


def test_without_the_flag_findings_carry_no_last_write(demo: Path) -> None:
    _, stdout, _ = diff(demo)
    assert all("lastWrite" not in f for f in json.loads(stdout)["findings"])


# -- bounded memory -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("hot", "compress"), [(False, False), (True, True)])
def test_memory_stays_flat_as_the_log_grows(tmp_path: Path, hot: bool, compress: bool) -> None:
    """Peak memory of the read (tracemalloc) on a log four times larger stays within the same small bound:
    only the last write per asked object is held. With `hot`, every line names the drifted queue and is parsed.
    bench/audit_log.py measures 200 MB logs, peak RSS and throughput."""
    import tracemalloc

    from reconciler.app.last_writes import audit_target
    from reconciler.core.resources import queue_ref
    from reconciler.sources.audit_log import last_writes as read_last_writes
    from tests.support.audit_log import write_noise_log

    target = audit_target(queue_ref("default-queue"))
    assert target is not None
    peaks = []
    for size in (1_000_000, 4_000_000):
        log = tmp_path / f"audit-{size}.log"
        write_noise_log(log, size, hot=hot, compress=compress)
        tracemalloc.start()
        try:
            found = read_last_writes([str(log)], [target], datetime.now(UTC))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert found[target].user == PERSON.username
    assert max(peaks) < 1_000_000, peaks  # a line or two and one write: no part of the log is kept
