"""Free text read from the cluster is redacted as it is read: a credential in an Event message, an
NVCFBackend's spec or annotations, a Queue annotation or NVCA's /healthz errors reaches no `doctor` or
`diff` format, no log line and no `kai-gitops snapshot` file. Also the last net: `Finding.to_dict` and
every format mask a finding's message, whatever put the credential there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.outputs import FORMATS, render
from reconciler.report.report import ClusterReport, Report
from tests.support.helpers import run_cli
from tests.support.kubeserver import KubeTestServer
from tests.support.kubeserver.__main__ import write_kubeconfig
from tests.support.kubeserver._snapshot import serve_snapshot
from tests.support.redaction_cluster_free_text import BLOB, DEMO, EVENT_URL, LAST_APPLIED, SECRETS, planted_items


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    tmp = tmp_path_factory.mktemp("free-text")
    repo = tmp / "repo"
    DEMO.build_repo(repo)
    with KubeTestServer() as server:
        serve_snapshot(server, planted_items())
        kubeconfig = tmp / "kubeconfig"
        write_kubeconfig(kubeconfig, "prod", server.url)
        yield repo, kubeconfig


def assert_masked(*texts: str) -> None:
    joined = "\n".join(texts)
    for secret in SECRETS:
        assert secret not in joined, secret


@pytest.mark.parametrize("fmt", FORMATS)
def test_doctor_and_diff_show_no_planted_cluster_text(cluster: tuple[Path, Path], fmt: str) -> None:
    repo, kubeconfig = cluster
    doctor = run_cli(["doctor", "--kubeconfig", kubeconfig, "-o", fmt, "--log-format", "json"])
    diff = run_cli(["diff", "--repo", repo, "--cluster", "prod-addon", "--kubeconfig", kubeconfig, "-o", fmt])
    assert doctor[0] == 2 and diff[0] == 2, (doctor[2], diff[2])
    assert "KAI-P-" in doctor[1] or "Pending" in doctor[1] or fmt != "text", doctor[1]
    assert_masked(*doctor[1:], *diff[1:])


def test_the_event_message_is_still_explained_masked(cluster: tuple[Path, Path]) -> None:
    _code, out, _err = run_cli(["doctor", "--kubeconfig", cluster[1]])
    assert "didn't have free GPUs" in out and "https://<redacted>@registry.example.com" in out


def test_the_snapshot_file_holds_no_planted_cluster_text(cluster: tuple[Path, Path], tmp_path: Path) -> None:
    for name in ("snap.yaml", "snap.json"):
        target = tmp_path / name
        code, out, err = run_cli(["snapshot", "--kubeconfig", cluster[1], "-o", target])
        assert code == 0, err
        text = target.read_text()
        assert "NVCFBackend" in text and "ngcAuth" in text and LAST_APPLIED not in text
        assert_masked(out, err, text)
        # read back, the snapshot gives the same masked findings
        code, doctor, err = run_cli(["doctor", "--snapshot", target, "-o", "json"])
        assert code == 2, err
        assert_masked(doctor, err)


def test_a_finding_message_is_masked_in_to_dict_and_every_format() -> None:
    finding = Finding(
        "KAI-X-001",
        Kind.VIOLATION,
        Severity.ERROR,
        f"copied from somewhere: https://{EVENT_URL}@h/x and key {BLOB}",
        "lab",
        title="t",
    )
    assert_masked(str(finding.to_dict()))
    report = Report("doctor", [ClusterReport("lab", findings=[finding])])
    assert_masked(*(render(report, fmt) for fmt in FORMATS))


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ('{"user":"svc","password":"pw-one"}', '{"user":"svc","password":"<redacted>"}'),
        ("password: hunter2", "password: <redacted>"),
        ("X-Api-Key: abc123", "X-Api-Key: <redacted>"),
        ("apiKey: 'two words'", "apiKey: '<redacted>'"),
        ('note: "token: inner"', 'note: "token: <redacted>"'),  # a pair inside another pair's quoted value
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abcdefghijkl", "Authorization: Bearer <redacted>"),
        ("secretName: my-secret", None),
        ("author: bob", None),
        ("time: 12:00", None),
        ("password: <redacted>", None),
    ],
)
def test_a_secret_name_value_pair_in_free_text_is_masked(text: str, masked: str | None) -> None:
    from reconciler.core.redact import redact_free_text

    assert redact_free_text(text) == (masked or text)
