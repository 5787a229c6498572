"""A drift's field changes (`Finding.changes`): written to JSON masked, read back from a saved report, old or new."""

from __future__ import annotations

import pytest

from reconciler.core.redact import REDACTED
from reconciler.core.resources import queue_ref
from reconciler.findings.builtin_rules import QUEUE_DRIFT, SHARD_DRIFT
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Finding, Kind
from reconciler.report.reader import finding_from_dict

QUOTA = DriftedField(("spec", "resources", "cpu", "quota"), 0, -1, "cpu.quota")


def _queue_drift() -> Finding:
    return QUEUE_DRIFT.finding(
        Kind.DRIFT,
        "Queue team-a differs from Git: cpu.quota 0 → -1.",
        "lab",
        subject=queue_ref("team-a"),
        changes=(QUOTA,),
        extra={"note": ""},
    )


def test_changes_survive_a_saved_report() -> None:
    finding = _queue_drift()
    written = finding.to_dict()
    assert written["changes"] == [
        {
            "field": "cpu.quota",
            "path": ["spec", "resources", "cpu", "quota"],
            "live": 0,
            "want": -1,
            "where": None,
            "origin": None,
        }
    ]
    assert "changes" not in written["details"]
    assert finding_from_dict(written).changes == (QUOTA,)


def test_a_finding_without_changes_writes_none() -> None:
    written = SHARD_DRIFT.finding(Kind.DRIFT, "SchedulingShard default does not exist", "lab").to_dict()
    assert "changes" not in written and finding_from_dict(written).changes == ()


def test_a_report_written_before_changes_reads_its_queue_changes_from_details() -> None:
    """Reports written before `changes` existed held a Queue's as details.changes, [field, live, Git] each."""
    written = _queue_drift().to_dict()
    del written["changes"]
    written["details"] = {"changes": [["cpu.quota", 0, -1], ["parent", "root", "default-parent-queue"]], "note": ""}
    read = finding_from_dict(written)
    assert read.changes == (QUOTA, DriftedField(("spec", "parentQueue"), "root", "default-parent-queue", "parent"))
    assert read.extra == {"note": ""}


def test_a_value_under_a_secret_key_never_leaves_masked() -> None:
    """Judged where it stands in the object: `password` masks both sides, in JSON and in every output's copy."""
    token = DriftedField(("spec", "auth", "password"), "hunter2-old", "hunter2-new", "auth.password")
    finding = SHARD_DRIFT.finding(
        Kind.DRIFT, "SchedulingShard default differs at auth.password", "lab", changes=(token,)
    )
    [written] = finding.to_dict()["changes"]
    assert (written["live"], written["want"]) == (REDACTED, REDACTED)
    [shown] = finding.redacted().changes
    assert (shown.live, shown.want) == (REDACTED, REDACTED)


@pytest.mark.parametrize("changes", [{"field": "x"}, "not a list", [["cpu.quota", 0, -1]]])
def test_a_malformed_changes_list_is_an_error(changes: object) -> None:
    written = _queue_drift().to_dict()
    written["changes"] = changes
    with pytest.raises(TypeError):
        finding_from_dict(written)
