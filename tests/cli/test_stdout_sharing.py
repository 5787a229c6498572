"""A plan, metrics or audit lines sent to stdout are machine-read: alone there, or a one-line usage error
before the run starts (two documents in one stream parse as neither)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import DEMO_SNAPSHOTS, ROOT, assert_one_line_error, run_cli


def _reconcile(repo: Path, *extra: Any) -> list[Any]:
    return [
        "reconcile",
        "--repo",
        repo,
        "--cluster",
        "prod-addon",
        "--snapshot",
        DEMO_SNAPSHOTS / "prod-addon.yaml",
        "--log-format",
        "text",
        *extra,
    ]


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (("--plan-out", "/dev/stdout", "-o", "json"), ("--plan-out /dev/stdout cannot share stdout", "json report")),
        (("--plan-out", "/dev/fd/1"), ("--plan-out /dev/fd/1 cannot share stdout", "the text report")),
        (
            ("--plan-out", "/dev/stdout", "--metrics-file", "/proc/self/fd/1", "-o", "text=/dev/null"),
            ("--plan-out /dev/stdout cannot share stdout with --metrics-file",),
        ),
        (("--metrics-file", "/dev/stdout", "-o", "sarif=-"), ("--metrics-file /dev/stdout", "the sarif report")),
    ],
)
def test_a_second_document_on_stdout_is_refused_before_the_run(
    demo_repo: Path, extra: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    code, out, err = run_cli(_reconcile(demo_repo, *extra))
    assert_one_line_error(code, "", err, *needles)
    assert '"changes"' not in out  # no plan was written


def test_a_plan_alone_on_stdout_is_one_json_document(demo_repo: Path, tmp_path: Path) -> None:
    # in a process of its own: /dev/stdout is the real descriptor 1, which CliRunner does not capture
    args = _reconcile(demo_repo, "--plan-out", "/dev/stdout", "-o", f"json={tmp_path / 'r.json'}")
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["kind"] == "kai-gitops/plan"
