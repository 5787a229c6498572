"""Text is redacted before it is cut, never after: a credential cut in half is a shape no pattern recognises
any more, so a redaction that runs on the cut text lets the first half through."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.core.show import MAX_TEXT
from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from tests.support.helpers import run_cli

SECRET = "glpat-AbCdEf0123456789xyzw"
URL = f"https://oauth2:{SECRET}@gitlab.example.com/acme/gitops.git"
SHOWN_HALF = SECRET[:10]  # what a cut inside the password leaves of it


def _cut_inside_the_password(cut: int) -> str:
    """Text whose cut at `cut` characters falls 12 characters into the URL's password, and that stays too long
    once redacted."""
    return "x" * (cut - len("https://oauth2:") - 12) + URL + " and more" * 120


def test_an_internal_error_is_redacted_before_it_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> None:
        raise RuntimeError(_cut_inside_the_password(300))

    monkeypatch.setattr("reconciler.cli.guard._check_stdout", fail)
    code, out, err = run_cli(["schema"])
    assert code == 1 and out == "" and err.startswith("kai-gitops: internal error: RuntimeError: xxx"), err
    assert SHOWN_HALF not in err and "oauth2:" not in err, err


def _finding(text: str, fix: Fix | None = None) -> Finding:
    return Finding("KAI-X-001", Kind.VIOLATION, Severity.ERROR, text, "prod", title=text, fix=fix, extra={"note": text})


@pytest.mark.parametrize("where", ["message", "title", "note", "description", "command"])
def test_a_long_finding_text_is_redacted_before_it_is_cut(where: str) -> None:
    text = _cut_inside_the_password(MAX_TEXT - len("… [truncated, 1,234 bytes]"))  # room for the marker
    finding = _finding(text, Fix(Action.NONE, text, text))
    shown: dict[str, Any] = {
        "message": finding.message,
        "title": finding.title,
        "note": finding.extra["note"],
        "description": finding.fix.description if finding.fix else None,
        "command": finding.fix.command if finding.fix else None,
    }
    assert "[truncated" in shown[where] and len(shown[where]) <= MAX_TEXT
    assert SHOWN_HALF not in str(finding.redacted().to_dict()), where
    assert SHOWN_HALF not in shown[where]


def test_text_that_fits_is_left_whole_for_the_outputs_to_redact() -> None:
    finding = _finding(f"clone {URL}")
    assert finding.message == f"clone {URL}"  # not judged twice on the way in
    assert SECRET not in finding.redacted().message  # the outputs' net catches it whole


def test_a_cluster_answer_quoted_in_an_error_is_redacted_before_it_is_cut() -> None:
    from reconciler.sources.cluster.client import status_message

    shown = status_message(_cut_inside_the_password(200).encode())  # a proxy's page, not a Status
    assert len(shown) == 200 and SHOWN_HALF not in shown, shown


def test_a_kubeconfig_plugin_error_is_redacted_before_it_is_cut() -> None:
    from reconciler.sources.cluster.kubeconfig import _one_line

    shown = _one_line(RuntimeError(_cut_inside_the_password(300)))
    assert len(shown) == 300 and SHOWN_HALF not in shown, shown


def test_every_output_redacts_what_the_drift_issue_redacted() -> None:
    """One net for every output (Finding.redacted): the drift issue's own (a subject's name, key names in the
    details) now covers SARIF, JSON and text too."""
    from reconciler.core.refs import ObjectRef

    blob = "AKIAq8RT3m9Zx0Lw7Ypd2Vn4Hs6Kc1Jf5Ub8Ge0Ti"  # a 40-character credential shape, a valid object name
    queue = ObjectRef("scheduling.run.ai/v2", "Queue", blob)
    finding = Finding(
        "KAI-X-001",
        Kind.VIOLATION,
        Severity.ERROR,
        "m",
        "prod",
        subject=queue,
        extra={"object": {"password": "hunter2"}},
    )
    shown = str(finding.redacted().to_dict())
    assert blob not in shown and "hunter2" not in shown, shown
