"""`--log-format auto`: JSON lines only inside a Kubernetes pod, text everywhere else (a CI job's log included).

A failed PR check in CI prints the one human error line; the run's start and end are debug-level in text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.telemetry import logs
from tests.support.helpers import assert_one_line_error, make_repo, run_cli, template_files

_TAB_ERROR = "scheduler:\n\tplacementStrategy: spread\n"  # a YAML tab: an input error at line 2


@pytest.fixture
def broken_repo(tmp_path: Path) -> Path:
    repo, _ = make_repo(tmp_path, template_files(**{"clusters__lab__kai-values.yaml": _TAB_ERROR}))
    return repo


def _outside_a_pod() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"KAI_GITOPS_LOG_FORMAT", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}
    }
    return env | {"CI": "true", "GITHUB_ACTIONS": "true"}


def test_a_failed_check_in_ci_prints_one_human_line_not_json(broken_repo: Path) -> None:
    """As a runner runs it: stderr is a pipe, not a terminal; the line names the file and line."""
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", "check", "--repo", str(broken_repo)],
        env=_outside_a_pod(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_one_line_error(done.returncode, done.stdout, done.stderr, "clusters/lab/kai-values.yaml:2")


def test_auto_is_text_on_a_pipe_outside_ci_too(broken_repo: Path) -> None:
    env = _outside_a_pod()
    del env["CI"], env["GITHUB_ACTIONS"]
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", "check", "--repo", str(broken_repo)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_one_line_error(done.returncode, done.stdout, done.stderr, "clusters/lab/kai-values.yaml:2")


def _pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, token: bool = True) -> dict[str, str | None]:
    """A pod's environment: the service variables, and the service account token where client-go reads it."""
    mounted = tmp_path / "serviceaccount" / "token"
    if token:
        mounted.parent.mkdir()
        mounted.write_text("not-a-real-token")
    monkeypatch.setattr(logs, "SERVICE_ACCOUNT_TOKEN", mounted)
    return {
        "KAI_GITOPS_LOG_FORMAT": None,
        "CI": None,
        "KUBERNETES_SERVICE_HOST": "10.96.0.1",
        "KUBERNETES_SERVICE_PORT": "443",
    }


def test_auto_is_json_inside_a_pod_with_the_run_start_and_end(
    broken_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _out, err = run_cli(["check", "--repo", broken_repo], env=_pod(tmp_path, monkeypatch))  # type: ignore[arg-type]
    assert code == 1
    lines = [json.loads(line) for line in err.splitlines()]
    assert [line.get("event") for line in lines] == ["run-start", "run-error", "run-end"]
    assert lines[1]["level"] == "error" and "clusters/lab/kai-values.yaml:2" in lines[1]["message"]
    assert lines[0]["level"] == lines[2]["level"] == "info"


@pytest.mark.parametrize("change", [{"CI": "true"}, {"KUBERNETES_SERVICE_PORT": None}, "no token"])
def test_auto_is_text_when_any_part_of_the_pod_is_missing_or_it_is_a_ci_job(
    broken_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: object
) -> None:
    """A CI runner that is itself a pod is still read by people; a service variable alone is not a pod."""
    env = _pod(tmp_path, monkeypatch, token=change != "no token")
    if isinstance(change, dict):
        env.update(change)
    assert_one_line_error(
        *run_cli(["check", "--repo", broken_repo], env=env),  # type: ignore[arg-type]
        "clusters/lab/kai-values.yaml:2",
    )


def test_run_start_and_end_are_debug_level_in_text() -> None:
    """Neither line reaches a person's terminal or a CI log; a log stack gets both (above)."""
    from reconciler.telemetry.run import RunObservation

    assert RunObservation("check", 0.0, 0, json_logs=False).lifecycle_level == logs.logging.DEBUG
    assert RunObservation("check", 0.0, 0, json_logs=True).lifecycle_level == logs.logging.INFO
