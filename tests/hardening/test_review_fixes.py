"""What an independent review of the hardening work found, each held here: secrets in the error forms CI
reads and in the job summary, stdout reached through /dev/fd/1, a refused run printing its metrics, reports
of kube contexts, and a server URL whose query was shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.outputs.destinations import emit, parse_output_specs
from reconciler.outputs.input_error import InputError
from reconciler.report.reader import report_from_dict
from reconciler.report.report import ClusterReport, Report
from tests.support.helpers import load_demo_builder

SECRET = "hunter2xyzSECRET"


def test_the_error_forms_ci_reads_are_redacted_and_escaped_as_the_stderr_line() -> None:
    error = InputError.of(UserError(f"cannot read: password: {SECRET} then \x1b]0;x\x07", where="a.yaml:3"), "check")
    assert SECRET not in error.line() and "\x1b" not in error.line() and "\\x1b" in error.line()
    assert (error.location.file, error.location.line) == ("a.yaml", 3)


def test_the_job_summary_is_redacted_as_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    finding = Finding("KAI-X-001", Kind.VIOLATION, Severity.ERROR, f"copied: password: {SECRET}", "lab", title="t")
    printed: list[str] = []
    emit(Report("check", [ClusterReport("lab", findings=[finding])]), parse_output_specs(["github"]), printed.append)
    assert SECRET not in summary.read_text() and "redacted" in summary.read_text()
    assert SECRET not in "".join(printed)


@pytest.mark.parametrize("path", ["/dev/fd/1", "/proc/self/fd/1"])
def test_stdout_by_any_name_is_stdout_for_the_sharing_rule(path: str) -> None:
    with pytest.raises(UserError, match="stdout"):
        parse_output_specs([f"json={path}", "text"])


def test_a_run_refused_for_sharing_stdout_prints_nothing_there(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    # a real process: /dev/stdout must be its own stdout, which an in-process runner does not capture
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", "check", "--repo", str(repo), "--metrics-file", "/dev/stdout"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert "stdout" in done.stderr


def test_a_doctor_report_named_after_a_kube_context_reads_back() -> None:
    context = "arn:aws:eks:us-west-2:123456789012:cluster/prod"
    data = Report("doctor", [ClusterReport(context)]).to_dict()
    assert report_from_dict(json.loads(json.dumps(data)), "doctor.json").clusters[0].cluster == context
    data["cluster"] = "prod\n::error::x"
    with pytest.raises(UserError, match="kube context name"):
        report_from_dict(data, "doctor.json")


def test_a_server_url_python_cannot_split_is_shown_without_query_or_credential() -> None:
    from reconciler.sources.cluster.client import shown_server

    assert shown_server(f"https://u:{SECRET}@[::1/x?token={SECRET}#f") == "https://[::1/x"


@pytest.mark.parametrize("value", ["json=-", "json=/dev/stdout", "yaml=/dev/fd/1", "/dev/stdout"])
def test_snapshot_stdout_by_any_name_is_printed_whole_after_the_read(value: str) -> None:
    """As for every other -o: `-` and /dev/stdout are stdout, never a file named `-` or a stream written
    while the read may still fail."""
    from reconciler.sources.snapshot_writer import SnapshotTarget

    assert SnapshotTarget.parse(value).path is None
