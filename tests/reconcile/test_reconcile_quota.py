"""`reconcile` beside the queue rules: KAI-Q-020..023 shown with the plan, and a change KAI-Q-020 flags (a
quota cut below what the queue's running work holds) refused unless --allow-over-quota, a saved plan too."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import assert_one_line_error, queue, run_cli
from tests.support.reconcile_support import Demo, demo_cluster, prod_without_kai_config_drift

TEAM_QUEUE = """apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: team-a
spec:
  parentQueue: default-parent-queue
  resources:
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    gpu: {quota: 2, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
"""
REFUSED = "the plan cuts a queue below what its running work holds (KAI-Q-020), nothing was written"
CUT = (
    "Queue team-a: Git sets gpu quota 2 GPU (live 8), below the 6 GPU its running work holds now "
    "(status.allocated): 4 GPU of running work becomes over-quota (reclaimed first)"
)


def team_queue(gpus_held: str | None) -> dict[str, Any]:
    """team-a live: a gpu quota of 8, its running work holding `gpus_held` (None: KAI wrote no status)."""
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    q = queue(
        "team-a",
        parent="default-parent-queue",
        resources={"cpu": unlimited, "gpu": {"quota": 8, "limit": -1, "overQuotaWeight": 1}, "memory": unlimited},
    )
    if gpus_held is not None:
        q["status"] = {
            "allocated": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": gpus_held},
            "allocatedNonPreemptible": {},
        }
    return q


def commit_team_queue(repo: Path) -> None:
    """prod-addon keeps team-a in Git with a gpu quota of 2."""
    config = repo / "kai-gitops.yaml"
    config.write_text(
        config.read_text().replace(
            "    environmentFile: environments/prod.yaml\n",
            "    environmentFile: environments/prod.yaml\n    queueFiles:\n      - clusters/prod/queues.yaml\n",
            1,
        )
    )
    (repo / "clusters" / "prod").mkdir(parents=True, exist_ok=True)
    (repo / "clusters" / "prod" / "queues.yaml").write_text(TEAM_QUEUE)
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", repo, "commit", "-qm", "team-a: gpu quota 2"],
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "PATH": "/usr/bin:/bin",
        },
    )


def cluster(tmp_path: Path, gpus_held: str | None) -> Iterator[Demo]:
    for demo in demo_cluster(tmp_path, [*prod_without_kai_config_drift(), team_queue(gpus_held)]):
        commit_team_queue(demo.repo)
        yield demo


@pytest.fixture
def busy(tmp_path: Path) -> Iterator[Demo]:
    """team-a's running work holds 6 GPUs: Git's quota of 2 cuts 4 of them."""
    yield from cluster(tmp_path, "6")


def set_held(demo: Demo, gpus: str) -> None:
    """KAI's queue controller writes status.allocated (the status subresource: the spec is untouched)."""
    live = demo.queue("team-a")
    live["status"] = {"allocated": {"nvidia.com/gpu": gpus}}
    del live["metadata"]["resourceVersion"]
    demo.server.add(live)


def team_writes(demo: Demo, since: int = 0) -> list[Any]:
    return [r for r in demo.server.requests[since:] if r.method != "GET" and r.path.endswith("/queues/team-a")]


def test_the_plan_shows_the_cut_beside_it_and_says_apply_refuses_it(busy: Demo) -> None:
    code, out, err = busy.reconcile()
    assert code == 2, err
    assert "  ~ update Queue/team-a  (KAI-D-002)" in out
    section = out[out.index("Queue checks (what the queues in Git would do):") :]
    assert f"  ERROR   KAI-Q-020 {CUT}\n" in section
    assert "  --apply refuses the change to Queue/team-a unless --allow-over-quota (KAI-Q-020).\n" in section


def test_the_diff_reports_the_cut_with_its_line_in_git(busy: Demo) -> None:
    code, out, err = run_cli(
        ["diff", "--repo", busy.repo, "--cluster", "prod-addon", "--kubeconfig", busy.kubeconfig, "-o", "json"]
    )
    assert code == 2, err
    [finding] = [f for f in json.loads(out)["findings"] if f["rule"] == "KAI-Q-020"]
    assert finding["message"] == CUT
    assert (finding["location"]["file"], finding["location"]["line"]) == ("clusters/prod/queues.yaml", 9)


def test_apply_refuses_the_cut_and_writes_nothing(busy: Demo) -> None:
    code, out, err = busy.reconcile("--apply")
    line = assert_one_line_error(code, out, err, REFUSED, CUT, "add --allow-over-quota")
    assert "Queue/default-queue" not in line
    assert busy.writes() == []  # not the other changes, not even the Lease
    assert busy.queue("team-a")["spec"]["resources"]["gpu"]["quota"] == 8


def test_allow_over_quota_applies_the_cut(busy: Demo) -> None:
    _code, report, err = busy.reconcile_json("--apply", "--allow-over-quota")
    assert report["apply"]["ok"], err
    assert "team-a" in {c["object"]["name"] for c in report["apply"]["changes"] if c["result"] == "applied"}
    assert busy.queue("team-a")["spec"]["resources"]["gpu"]["quota"] == 2


def test_a_saved_plan_is_held_to_the_allocation_when_it_is_applied(tmp_path: Path) -> None:
    """Saved while team-a held 1 GPU (the cut fits), applied after its work grew to 6: refused then."""
    for demo in cluster(tmp_path, "1"):
        plan = tmp_path / "plan.json"
        code, out, err = demo.reconcile("--plan-out", plan)
        assert "KAI-Q-020" not in out and code == 2, err
        set_held(demo, "6")
        code, out, err = demo.reconcile("--plan", plan, "--apply")
        assert_one_line_error(code, out, err, REFUSED, CUT)
        assert team_writes(demo) == []
        code, report, err = demo.reconcile_json("--plan", plan, "--apply", "--allow-over-quota")
        assert report["apply"]["ok"], err
        assert demo.queue("team-a")["spec"]["resources"]["gpu"]["quota"] == 2


def test_a_cut_that_fits_or_a_queue_without_status_is_applied(tmp_path: Path) -> None:
    for held in ("2", "1500m", None):  # equal, a fraction below, KAI wrote no status (nothing to judge)
        for demo in cluster(tmp_path / str(held), held):
            _code, out, _err = demo.reconcile()
            assert "  ~ update Queue/team-a" in out and "KAI-Q-020" not in out
            _code, report, err = demo.reconcile_json("--apply")
            assert report["apply"]["ok"], err
            assert demo.queue("team-a")["spec"]["resources"]["gpu"]["quota"] == 2
