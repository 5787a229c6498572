"""`reconcile` exit codes agree with and without --apply: 0 only when nothing is left to do and no finding
at or above --fail-on remains; 2 when changes, operator items or such findings remain (docs/reconcile.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import run_cli
from tests.support.kubeserver import KubeTestServer
from tests.support.kubeserver.__main__ import write_kubeconfig
from tests.support.kubeserver._snapshot import serve_snapshot
from tests.support.reconcile_support import DEMO

SCHEDULE = "nvca.nvcf.nvidia.io/schedule"


@pytest.fixture(autouse=True)
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")


def lab(*, unlabelled: bool = False, release_drift: bool = False) -> list[dict[str, Any]]:
    """The demo's lab cluster, clean against the repo's HEAD~1; optionally a fixable and/or an operator's drift."""
    items = DEMO.lab_standalone_snapshot()
    if unlabelled:  # kai-gitops may fix it: the plan sets the label again
        node = next(i for i in items if i["kind"] == "Node" and i["metadata"]["name"] == "lab-gpu-2")
        node["metadata"]["labels"].pop(SCHEDULE)
    if release_drift:  # only the operator can fix it (helm upgrade): KAI-D-004, a warning
        values = DEMO._canonical_values()
        values["podAnnotations"] = {"team": "ml"}
        release = DEMO._release("kai-scheduler", "kai-scheduler", 1, "deployed", "v0.14.7", values)
        items = [release if i["kind"] == "Secret" else i for i in items]
    return items


class Lab:
    def __init__(self, tmp_path: Path, server: KubeTestServer) -> None:
        self.repo, self.kubeconfig, self.server = tmp_path / "repo", tmp_path / "kubeconfig", server
        DEMO.build_repo(self.repo)
        write_kubeconfig(self.kubeconfig, "lab", server.url)

    def reconcile(self, *extra: str) -> tuple[int, str, str]:
        return run_cli(
            [
                "reconcile",
                "--repo",
                self.repo,
                "--ref",
                "HEAD~1",
                "--cluster",
                "lab-standalone",
                "--kubeconfig",
                self.kubeconfig,
                *extra,
            ]
        )

    def label(self) -> str | None:
        node = self.server.get_object("v1", "Node", "lab-gpu-2")
        assert node is not None
        return (node["metadata"].get("labels") or {}).get(SCHEDULE)


def serve(tmp_path: Path, items: list[dict[str, Any]]) -> Iterator[Lab]:
    with KubeTestServer() as server:
        serve_snapshot(server, items, nvca_from_queues=True)
        yield Lab(tmp_path, server)


def test_nothing_to_do_and_clean_exits_0_with_and_without_apply(tmp_path: Path) -> None:
    for cluster in serve(tmp_path, lab()):
        assert cluster.reconcile()[0] == 0
        code, out, err = cluster.reconcile("--apply")
        assert code == 0, out + err
        assert "Nothing to apply." in out


def test_all_applied_and_clean_exits_0(tmp_path: Path) -> None:
    for cluster in serve(tmp_path, lab(unlabelled=True)):
        assert cluster.reconcile()[0] == 2  # a change is pending
        code, out, err = cluster.reconcile("--apply")
        assert code == 0, out + err
        assert "Apply complete: 1 applied" in out and cluster.label() == "true"


def test_all_applied_but_a_finding_at_fail_on_remains_exits_2(tmp_path: Path) -> None:
    for cluster in serve(tmp_path, lab(unlabelled=True, release_drift=True)):
        code, out, err = cluster.reconcile("--apply")  # --fail-on warning: KAI-D-004 remains
        assert code == 2, out + err
        assert "Apply complete: 1 applied" in out and cluster.label() == "true"


def test_an_operator_item_left_counts_at_its_rules_severity_as_in_the_plan(tmp_path: Path) -> None:
    # The operator's item (KAI-D-004, a warning: only `helm upgrade` fixes it) is in the plan whatever --fail-on
    # says. It fails the run at --fail-on warning and not at --fail-on error (the CronJob's: a warning must not
    # fail the Job every hour), and an apply that leaves it agrees with its plan.
    for cluster in serve(tmp_path, lab(unlabelled=True, release_drift=True)):
        assert cluster.reconcile("--fail-on", "error")[0] == 2  # the label change is an error's fix
        code, out, err = cluster.reconcile("--apply", "--fail-on", "error")
        assert code == 0, out + err
        assert "Apply complete: 1 applied" in out and "! operator KAI-D-004" in out
        for fail_on, expected in (("error", 0), ("warning", 2)):
            code, out, err = cluster.reconcile("--fail-on", fail_on)
            assert code == expected, out + err
            assert "! operator KAI-D-004" in out
            code, out, err = cluster.reconcile("--apply", "--fail-on", fail_on)  # nothing to apply, item remains
            assert code == expected, out + err
            assert "Nothing to apply." in out and "! operator KAI-D-004" in out
