"""`check --live-snapshot`: the PR check judges Git's queues against a snapshot's live Queues (their specs and
status.allocated), so a quota cut below running work (KAI-Q-020) and a parentQueue that exists nowhere
(KAI-Q-023) are reported without cluster credentials in CI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reconciler.sources.snapshot_writer import SnapshotWriter
from tests.support.helpers import assert_one_line_error, make_repo, queue, run_cli, template_files

LAB = "lab-standalone"
LAB_QUEUES = "clusters/lab/queues.yaml"
# An hour before the run: fresh (a day-old snapshot warns that its live checks are stale)
TAKEN_AT = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)
TAKEN = TAKEN_AT.strftime("%Y-%m-%dT%H:%M:%SZ")
SHOWN_TAKEN = TAKEN_AT.strftime("%Y-%m-%d %H:%M UTC")
LAB_UID = "6f1c0a52-3d1e-4d0b-9a51-0c2f3e4b5a61"
RESEARCH_GPU = ("gpu: {quota: 8, limit: 16, overQuotaWeight: 1}", "gpu: {quota: 2, limit: 16, overQuotaWeight: 1}")
TEAM_X = """---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: team-x
spec:
  parentQueue: {parent}
  resources:
    cpu: {{quota: -1, limit: -1, overQuotaWeight: 1}}
    gpu: {{quota: -1, limit: -1, overQuotaWeight: 1}}
    memory: {{quota: -1, limit: -1, overQuotaWeight: 1}}
"""


def lab_queues(gpus_held: str = "6") -> list[dict[str, Any]]:
    """The lab cluster live: research with a gpu quota of 8 whose running work holds `gpus_held` GPUs, and a
    queue `platform` that exists only in the cluster."""
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    research = queue(
        "research",
        parent="default-parent-queue",
        resources={
            "cpu": {"quota": 64000, "limit": 128000, "overQuotaWeight": 1},
            "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 1},
            "memory": {"quota": 512000, "limit": 1024000, "overQuotaWeight": 1},
        },
    )
    research["status"] = {"allocated": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": gpus_held}}
    return [
        queue("default-parent-queue", unlimited),
        queue("default-queue", unlimited, "default-parent-queue"),
        research,
        queue("platform", unlimited),
    ]


def write_snapshot(
    path: Path, items: list[dict[str, Any]], taken_at: str | None = TAKEN, cluster_uid: str | None = None
) -> Path:
    """As `kai-gitops snapshot` writes it (the writer is the one the command uses)."""
    when = datetime.fromisoformat(taken_at) if taken_at else None
    with SnapshotWriter(str(path), taken_at=when, cluster_uid=cluster_uid) as writer:
        for item in items:
            writer.add(item)
        writer.commit()
    return path


def pr_repo(
    tmp_path: Path, *edits: tuple[str, str, str], base_edits: tuple[tuple[str, str, str], ...] = (), **extra: str | None
) -> Path:
    """The template repository (commit 1, `base_edits` applied), then a pull request commit with `edits`."""
    base = template_files(*base_edits)
    head = template_files(*base_edits, *edits, **extra)
    path, _ = make_repo(tmp_path, base, [{k: v for k, v in head.items() if base.get(k) != v}])
    return path


def check(repo: Path, *args: Any, warning: str | None = None) -> tuple[int, dict[str, Any]]:
    """The run's exit code and JSON report; stderr holds nothing, or the one warning line that says `warning`."""
    code, stdout, stderr = run_cli(["check", "--repo", repo, *args, "-o", "json"])
    if warning is None:
        assert stderr == "", stderr
    else:
        assert len(stderr.splitlines()) == 1 and "warning" in stderr and warning in stderr, stderr
    return code, json.loads(stdout)


def messages(report: dict[str, Any], rule: str, cluster: str = LAB) -> list[str]:
    found = [c for c in report["clusters"] if c["cluster"] == cluster]
    assert len(found) == 1, [c["cluster"] for c in report["clusters"]]
    return [f["message"] for f in found[0]["findings"] if f["rule"] == rule]


@pytest.fixture
def cut(tmp_path: Path) -> Path:
    """A pull request that cuts research's gpu quota from 8 to 2."""
    return pr_repo(tmp_path, (LAB_QUEUES, *RESEARCH_GPU))


# -- KAI-Q-020 -------------------------------------------------------------------------------------------------------


def test_a_cut_below_the_snapshots_allocation_is_reported_with_the_snapshots_time(cut: Path, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    code, report = check(cut, "--live-snapshot", f"{LAB}={snapshot}")
    assert code == 2
    assert messages(report, "KAI-Q-020") == [
        "Queue research: Git sets gpu quota 2 GPU (live 8), below the 6 GPU its running work holds now "
        "(status.allocated): 4 GPU of running work becomes over-quota (reclaimed first); allocated as of "
        f"{SHOWN_TAKEN} (snapshot {snapshot})"
    ]


def test_a_cut_the_running_work_still_fits_in_is_not_reported(cut: Path, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.json", lab_queues("2"))
    _, report = check(cut, "--live-snapshot", f"{LAB}={snapshot}")
    assert messages(report, "KAI-Q-020") == []


def test_without_a_snapshot_the_check_cannot_judge_a_cut(cut: Path) -> None:
    _, report = check(cut)
    assert messages(report, "KAI-Q-020") == []


def test_a_bare_file_is_the_snapshot_of_the_cluster_named_by_cluster(cut: Path, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    code, report = check(cut, "--cluster", LAB, "--live-snapshot", snapshot)
    assert code == 2 and len(messages(report, "KAI-Q-020")) == 1


def test_a_snapshot_that_does_not_say_when_it_was_taken_says_so(cut: Path, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"), taken_at=None)
    _, report = check(
        cut,
        "--live-snapshot",
        f"{LAB}={snapshot}",
        warning=f"{snapshot}: the snapshot does not say when it was taken: the live checks of '{LAB}' may be stale",
    )
    [message] = messages(report, "KAI-Q-020")
    assert message.endswith(f"; allocated per snapshot {snapshot} (it does not say when it was taken)")


def test_with_base_the_cut_is_measured_from_the_base(tmp_path: Path) -> None:
    """Base quota 4 (not yet applied: live still 8), the PR cuts it to 2: the PR's own change is named."""
    to_four = (LAB_QUEUES, RESEARCH_GPU[0], "gpu: {quota: 4, limit: 16, overQuotaWeight: 1}")
    repo = pr_repo(tmp_path, (LAB_QUEUES, to_four[2], RESEARCH_GPU[1]), base_edits=(to_four,))
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    code, report = check(repo, "--base", "HEAD~1", "--live-snapshot", f"{LAB}={snapshot}")
    assert code == 2
    [message] = messages(report, "KAI-Q-020")
    assert message.startswith("Queue research: Git sets gpu quota 2 GPU (base 4), below the 6 GPU")


def test_with_base_a_number_the_pr_leaves_alone_is_not_its_cut(tmp_path: Path) -> None:
    """The base already says 2 (live 8, holding 6): that is the base's change to answer for, not this PR's."""
    repo = pr_repo(
        tmp_path,
        (LAB_QUEUES, "name: research", "name: research  # owned by the lab"),
        base_edits=((LAB_QUEUES, *RESEARCH_GPU),),
    )
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    _, report = check(repo, "--base", "HEAD~1", "--live-snapshot", f"{LAB}={snapshot}")
    assert messages(report, "KAI-Q-020") == []
    _, without_base = check(repo, "--live-snapshot", f"{LAB}={snapshot}")
    assert len(messages(without_base, "KAI-Q-020")) == 1


# -- KAI-Q-023 -------------------------------------------------------------------------------------------------------


def with_team_x(tmp_path: Path, parent: str) -> Path:
    text = template_files()[LAB_QUEUES] or ""
    return pr_repo(tmp_path, **{LAB_QUEUES.replace("/", "__"): text + TEAM_X.format(parent=parent)})


def test_a_parent_that_exists_only_in_the_cluster_is_no_finding(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    _, report = check(with_team_x(tmp_path, "platform"), "--live-snapshot", f"{LAB}={snapshot}")
    assert messages(report, "KAI-Q-023") == []


def test_a_parent_missing_from_git_and_the_snapshot_is_reported(tmp_path: Path) -> None:
    repo = with_team_x(tmp_path, "nowhere")
    _, without = check(repo)
    assert messages(without, "KAI-Q-023") == []  # Git alone cannot say: the queue may exist live
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    code, report = check(repo, "--live-snapshot", f"{LAB}={snapshot}")
    assert code == 2
    assert messages(report, "KAI-Q-023") == [
        "Queue team-x has parentQueue nowhere, which exists neither in Git nor in the cluster (cluster's queues "
        f"as of {SHOWN_TAKEN}, snapshot {snapshot}); KAI will not schedule its pods"
    ]


def test_each_kai_q_023_case_gets_its_own_remedy(tmp_path: Path) -> None:
    """A missing parent's fix says nothing about cycles; a cycle's says nothing about missing parents."""
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    _, missing = check(with_team_x(tmp_path / "missing", "nowhere"), "--live-snapshot", f"{LAB}={snapshot}")
    _, cycle = check(with_team_x(tmp_path / "cycle", "team-x"))
    [[missing_fix], [cycle_fix]] = [
        [f["fix"]["description"] for c in r["clusters"] for f in c["findings"] if f["rule"] == "KAI-Q-023"]
        for r in (missing, cycle)
    ]
    assert "exists" in missing_fix and "cycle" not in missing_fix
    assert "cycle" in cycle_fix and "declare" not in cycle_fix


def test_a_parent_git_does_not_declare_is_an_info_finding_without_the_snapshot(tmp_path: Path) -> None:
    repo = with_team_x(tmp_path, "nowhere")
    code, without = check(repo)
    assert code == 0 and messages(without, "KAI-Q-024") == [
        "Queue team-x has parentQueue nowhere, which Git does not declare; not verified without --live-snapshot (if "
        "it is a typo, KAI will not schedule the queue's pods)"
    ]
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    _, verified = check(repo, "--live-snapshot", f"{LAB}={snapshot}")
    assert messages(verified, "KAI-Q-024") == [] and len(messages(verified, "KAI-Q-023")) == 1


# -- fleets and shards -----------------------------------------------------------------------------------------------


def shard_of(repo: Path, cluster: str) -> str:
    for i in (1, 2):
        _, report = check(repo, "--shard", f"{i}/2")
        if any(c["cluster"] == cluster for c in report["clusters"]):
            return f"{i}/2"
    raise AssertionError(f"no shard checks {cluster}")


def test_only_the_named_clusters_get_live_data(cut: Path, tmp_path: Path) -> None:
    """prod-addon gets its own snapshot, where research does not exist: only lab's cut is judged on lab's."""
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    prod = write_snapshot(tmp_path / "prod.yaml", lab_queues("6")[:2])
    _, report = check(cut, "--live-snapshot", f"{LAB}={lab}", "--live-snapshot", f"prod-addon={prod}")
    assert len(messages(report, "KAI-Q-020")) == 1
    assert messages(report, "KAI-Q-020", "prod-addon") == []


def test_a_shard_reads_only_its_own_clusters_snapshots(cut: Path, tmp_path: Path) -> None:
    """Every shard job gets the same list: the other shards' snapshots are not read (this one is broken)."""
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    broken = tmp_path / "prod.json"
    broken.write_text("{not json")
    mine = shard_of(cut, LAB)
    other = "2/2" if mine == "1/2" else "1/2"
    both = ["--live-snapshot", f"{LAB}={lab}", "--live-snapshot", f"prod-addon={broken}"]
    code, report = check(cut, "--shard", other, "--live-snapshot", f"{LAB}={lab}")
    assert [c["cluster"] for c in report["clusters"]] == ["prod-addon"] and code != 1
    code, report = check(cut, "--shard", mine, *both[:2])
    assert code == 2 and len(messages(report, "KAI-Q-020")) == 1
    assert_one_line_error(*run_cli(["check", "--repo", cut, "--shard", other, *both]), f"{broken}:1", "invalid JSON")


def test_a_shard_still_refuses_a_cluster_the_repository_does_not_declare(cut: Path, tmp_path: Path) -> None:
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    assert_one_line_error(
        *run_cli(["check", "--repo", cut, "--shard", "1/2", "--live-snapshot", f"lab={lab}"]),
        "--live-snapshot names cluster 'lab', which kai-gitops.yaml does not declare",
        "known clusters: prod-addon, lab-standalone",
    )


# -- errors ----------------------------------------------------------------------------------------------------------


def error_of(repo: Path, *args: Any, needles: tuple[str, ...]) -> None:
    code, stdout, stderr = run_cli(["check", "--repo", repo, *args])
    assert_one_line_error(code, stdout, stderr, *needles)
    assert stdout == ""


def test_a_cluster_kai_gitops_yaml_does_not_declare_is_an_error(cut: Path, tmp_path: Path) -> None:
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    error_of(
        cut,
        "--live-snapshot",
        f"labx={lab}",
        needles=("--live-snapshot names cluster 'labx', which kai-gitops.yaml does not declare",),
    )


def test_a_bare_file_without_cluster_is_an_error(cut: Path, tmp_path: Path) -> None:
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    error_of(
        cut, "--live-snapshot", lab, needles=(f"--live-snapshot {lab}: which cluster's snapshot is it?", "CLUSTER=FILE")
    )


def test_a_snapshot_of_another_cluster_than_cluster_is_an_error(cut: Path, tmp_path: Path) -> None:
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    error_of(
        cut,
        "--cluster",
        LAB,
        "--live-snapshot",
        f"prod-addon={lab}",
        needles=("--live-snapshot names cluster 'prod-addon', but --cluster checks only 'lab-standalone'",),
    )


def test_two_snapshots_of_one_cluster_are_an_error(cut: Path, tmp_path: Path) -> None:
    lab = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    error_of(
        cut,
        "--live-snapshot",
        f"{LAB}={lab}",
        "--live-snapshot",
        f"{LAB}={lab}",
        needles=(f"--live-snapshot names cluster '{LAB}' twice",),
    )


def test_a_missing_snapshot_is_an_error(cut: Path, tmp_path: Path) -> None:
    error_of(
        cut,
        "--live-snapshot",
        f"{LAB}={tmp_path / 'gone.yaml'}",
        needles=("--live-snapshot", "gone.yaml: snapshot file not found"),
    )


def test_a_value_naming_no_file_is_an_error(cut: Path) -> None:
    error_of(cut, "--live-snapshot", f"{LAB}=", needles=(f"'{LAB}=' names no file: write CLUSTER=FILE",))


def test_an_unreadable_snapshot_is_an_error(cut: Path, tmp_path: Path) -> None:
    broken = tmp_path / "lab.yaml"
    broken.write_text("items: [\n")
    error_of(cut, "--live-snapshot", f"{LAB}={broken}", needles=(str(broken),))


def test_a_snapshot_without_queues_is_an_error(cut: Path, tmp_path: Path) -> None:
    empty = write_snapshot(tmp_path / "lab.yaml", [])
    error_of(
        cut,
        "--live-snapshot",
        f"{LAB}={empty}",
        needles=(str(empty), "snapshot holds no Queue and no Queue CRD: not a snapshot of a KAI cluster"),
    )


def test_a_queue_of_the_wrong_shape_is_an_error(cut: Path, tmp_path: Path) -> None:
    research = lab_queues()[2]
    research["status"]["allocated"]["nvidia.com/gpu"] = "six"
    bad = write_snapshot(tmp_path / "lab.yaml", [research])
    error_of(cut, "--live-snapshot", f"{LAB}={bad}", needles=("Queue", "research", "status.allocated"))


def test_a_taken_at_that_is_no_time_is_an_error(cut: Path, tmp_path: Path) -> None:
    bad = write_snapshot(tmp_path / "lab.yaml", lab_queues())
    bad.write_text(bad.read_text().replace(f'"{TAKEN.removesuffix("Z")}.000000Z"', "yesterday"))
    error_of(
        cut,
        "--live-snapshot",
        f"{LAB}={bad}",
        needles=(f"{bad}:", "kai-gitops.io/taken-at is not an RFC 3339 time with a zone: 'yesterday'"),
    )


@pytest.mark.parametrize("name", ["lab.yaml", "lab.json"])
def test_the_time_and_allocations_read_back_from_either_format(tmp_path: Path, name: str) -> None:
    from reconciler.sources.snapshot import read_snapshot_queues

    read = read_snapshot_queues(str(write_snapshot(tmp_path / name, lab_queues())))
    assert read.taken_at == TAKEN_AT
    assert read.allocations["research"].allocated["gpu"] == 6.0 and "platform" in read.queues


# -- which cluster, and how old: the snapshot's identity ------------------------------------------------------------


def pinned(tmp_path: Path, uid: str = LAB_UID, **kwargs: Any) -> Path:
    """The cut, in a repository whose kai-gitops.yaml pins lab-standalone to its kube-system UID."""
    pin = ("kai-gitops.yaml", f"  - name: {LAB}\n", f"  - name: {LAB}\n    clusterUID: {uid}\n")
    return pr_repo(tmp_path, (LAB_QUEUES, *RESEARCH_GPU), base_edits=(pin,), **kwargs)


@pytest.mark.parametrize("name", ["lab.yaml", "lab.json"])
def test_the_snapshot_names_its_cluster_and_reads_back(tmp_path: Path, name: str) -> None:
    from reconciler.sources.snapshot import CLUSTER_UID_ANNOTATION, read_snapshot_queues

    path = write_snapshot(tmp_path / name, lab_queues(), cluster_uid=LAB_UID)
    assert CLUSTER_UID_ANNOTATION in path.read_text()
    assert read_snapshot_queues(str(path)).cluster_uid == LAB_UID


def test_a_snapshot_of_the_pinned_cluster_is_judged(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"), cluster_uid=LAB_UID)
    code, report = check(pinned(tmp_path), "--live-snapshot", f"{LAB}={snapshot}")
    assert code == 2 and len(messages(report, "KAI-Q-020")) == 1


def test_a_snapshot_of_another_cluster_is_refused(tmp_path: Path) -> None:
    other = "0b7e5f1d-aaaa-4bbb-8ccc-123456789abc"
    snapshot = write_snapshot(tmp_path / "prod.yaml", lab_queues("2"), cluster_uid=other)
    error_of(
        pinned(tmp_path),
        "--live-snapshot",
        f"{LAB}={snapshot}",
        needles=(
            str(snapshot),
            f"the snapshot is of another cluster (kube-system UID {other}, but "
            f"kai-gitops.yaml pins '{LAB}' to {LAB_UID})",
        ),
    )


def test_with_base_the_pin_is_the_bases(tmp_path: Path) -> None:
    """A pull request that re-pins the cluster to another's UID cannot make that cluster's snapshot judge it."""
    other = "0b7e5f1d-aaaa-4bbb-8ccc-123456789abc"
    repo = pinned(
        tmp_path,
        **{
            "kai-gitops.yaml": template_files(
                ("kai-gitops.yaml", f"  - name: {LAB}\n", f"  - name: {LAB}\n    clusterUID: {other}\n")
            )["kai-gitops.yaml"]
        },
    )
    snapshot = write_snapshot(tmp_path / "prod.yaml", lab_queues("2"), cluster_uid=other)
    check(repo, "--live-snapshot", f"{LAB}={snapshot}")  # without --base, the PR's own pin is all there is
    code, stdout, stderr = run_cli(
        ["check", "--repo", repo, "--base", "HEAD~1", "--live-snapshot", f"{LAB}={snapshot}"]
    )
    assert_one_line_error(code, stdout, stderr, f"pins '{LAB}' to {LAB_UID}")


def test_a_snapshot_that_does_not_name_its_cluster_is_judged_with_a_warning(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"))
    code, report = check(
        pinned(tmp_path),
        "--live-snapshot",
        f"{LAB}={snapshot}",
        warning="the snapshot does not say which cluster it is of (no kai-gitops.io/cluster-uid",
    )
    assert code == 2 and len(messages(report, "KAI-Q-020")) == 1
    _, unpinned = check(
        pr_repo(tmp_path / "unpinned", (LAB_QUEUES, *RESEARCH_GPU)), "--live-snapshot", f"{LAB}={snapshot}"
    )  # nothing to hold it to: no warning
    assert len(messages(unpinned, "KAI-Q-020")) == 1


def test_an_old_snapshot_is_judged_with_a_warning_that_its_live_checks_are_stale(cut: Path, tmp_path: Path) -> None:
    old = (datetime.now(UTC) - timedelta(hours=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    snapshot = write_snapshot(tmp_path / "lab.yaml", lab_queues("6"), taken_at=old)
    code, report = check(
        cut, "--live-snapshot", f"{LAB}={snapshot}", warning=f"{snapshot}: the snapshot was taken 1 day ago"
    )
    assert code == 2 and len(messages(report, "KAI-Q-020")) == 1  # still judged
    _, _, stderr = run_cli(["check", "--repo", cut, "--live-snapshot", f"{LAB}={snapshot}", "-o", "json"])
    assert "more than --live-snapshot-max-age allows (1 day)" in stderr and f"live checks of '{LAB}'" in stderr
    assert "are stale" in stderr
    check(cut, "--live-snapshot", f"{LAB}={snapshot}", "--live-snapshot-max-age", "36")  # allowed: no warning
    check(
        cut,
        "--live-snapshot",
        f"{LAB}={write_snapshot(tmp_path / 'new.yaml', lab_queues('6'))}",
        "--live-snapshot-max-age",
        "0.5",
        warning="the snapshot was taken 1 hour ago",
    )


def test_a_cluster_uid_that_is_no_uid_is_an_error(cut: Path, tmp_path: Path) -> None:
    bad = write_snapshot(tmp_path / "lab.yaml", lab_queues(), cluster_uid=LAB_UID)
    bad.write_text(bad.read_text().replace(f'"{LAB_UID}"', '"../../etc\\u001b[2J"'))
    error_of(
        cut,
        "--live-snapshot",
        f"{LAB}={bad}",
        needles=(f"{bad}:", "annotation kai-gitops.io/cluster-uid is not a Kubernetes UID"),
    )


def test_a_cluster_uid_that_is_no_uid_is_refused_by_the_schema(tmp_path: Path) -> None:
    repo = pinned(tmp_path, uid="not a uid")
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "clusterUID")
