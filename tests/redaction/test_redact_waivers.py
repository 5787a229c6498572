"""A waiver's `reason` and `owner` are free text every output quotes: a credential pasted into them never reaches
a format, the job summary or a log (issue 26). Masked as the waivers file is read, and once more by the report's
net (`Finding.redacted`) for a `waived_by` that comes from elsewhere (a saved report read back by `report merge`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.checks.policy.waivers import load_waivers
from reconciler.core.redact import REDACTED
from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.outputs import FORMATS
from tests.support.helpers import DEMO_SNAPSHOTS, make_repo, run_cli, template_files

PROD_SNAPSHOT = DEMO_SNAPSHOTS / "prod-addon.yaml"
GITHUB = "ghp_" + "Zq9Waiver0Token0Github00000000000000"
URL_PASSWORD = "Zq9WaiverUrlPassw0rd"
PAIR = "Zq9WaiverPairS3cret"
OWNER_TOKEN = "glpat-Zq9WaiverOwnerGitlab0000"
AWS = "AKIAZQ9WAIVEROWNER00"
SECRETS = (GITHUB, URL_PASSWORD, PAIR, OWNER_TOKEN, AWS)

REASON = (
    f"label fixed by the node image rollout; ask the bot ({GITHUB}) or see "
    f"https://ops:{URL_PASSWORD}@wiki.example.com/nodes, password: {PAIR}"
)
OWNER = f"nodes@example.com {OWNER_TOKEN} {AWS}"


def waivers(expires: str, subject: str = "Node/gpu-node-2") -> str:
    return (
        "waivers:\n"
        f'  - rule: NVCA-S-012\n    subject: {subject}\n    reason: "{REASON}"\n'
        f'    owner: "{OWNER}"\n    expires: {expires}\n'
    )


def test_the_reason_and_the_owner_are_masked_as_the_file_is_read() -> None:
    [waiver] = load_waivers(waivers("2099-12-31"))
    assert not any(secret in waiver.label for secret in SECRETS), waiver.label
    assert waiver.reason.startswith("label fixed by the node image rollout") and REDACTED in waiver.reason
    assert waiver.owner.startswith("nodes@example.com ")
    assert "https://<redacted>@wiki.example.com/nodes" in waiver.reason


def test_a_waived_by_from_elsewhere_is_masked_by_the_report_net() -> None:
    finding = Finding("NVCA-S-012", Kind.VIOLATION, Severity.WARNING, "m", "prod", waived_by=f"x.yaml:3: {REASON}")
    for text in (finding.redacted().waived_by or "", str(finding.to_dict()["waived_by"])):
        assert not any(secret in text for secret in SECRETS), text


@pytest.mark.parametrize(
    "expires, subject, rule",
    [
        ("2099-12-31", "Node/gpu-node-2", "NVCA-S-012"),  # used: the finding's waived_by quotes the reason
        ("2020-01-01", "Node/gpu-node-2", "KAI-W-001"),  # expired: its finding quotes the owner
        ("2099-12-31", "Node/no-such-node", "KAI-W-002"),  # unused: its finding quotes the owner
    ],
    ids=["waived", "expired", "unused"],
)
def test_no_credential_of_a_waiver_reaches_any_format_or_the_job_summary(
    tmp_path: Path, expires: str, subject: str, rule: str
) -> None:
    repo, _ = make_repo(tmp_path, template_files(**{"kai-gitops-waivers.yaml": waivers(expires, subject)}))
    outputs, summary = tmp_path / "out", tmp_path / "summary.md"
    outputs.mkdir()
    code, stdout, stderr = run_cli(
        [
            "diff",
            "--repo",
            repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            PROD_SNAPSHOT,
            "-o",
            "text",
            *(f"--output={fmt}={outputs / fmt}" for fmt in FORMATS if fmt != "text"),
        ],
        env={"GITHUB_STEP_SUMMARY": str(summary), "KAI_GITOPS_LOG_FORMAT": "json"},
    )
    assert code == 2, stderr
    sinks = {
        "stdout": stdout,
        "stderr": stderr,
        "job summary": summary.read_text(),
        **{fmt: (outputs / fmt).read_text() for fmt in FORMATS if fmt != "text"},
    }
    leaks = [(secret, sink) for secret in SECRETS for sink, text in sinks.items() if secret in text]
    assert not leaks, leaks
    assert rule in stdout and "nodes@example.com" in stdout  # the waiver was read, and is shown
