"""Inputs the drift explanations read from outside (saved reports, snapshots, audit logs, PolicyReports,
managedFields, queue status) at the edges of their types: a valid shape past the last UTC instant, a number
past any quantity, a saved report's lastWrite of the wrong type, a client-chosen Audit-ID. Each is a one-line
error or is left out, never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.app.last_writes import classify
from reconciler.core.quantity import parse_quantity
from reconciler.findings.attribution import short_time
from reconciler.findings.last_write import Identity, LastWrite
from reconciler.model.config import AuditIdentities
from reconciler.publish.policyreport.cluster import _first_seen
from reconciler.sources.audit_log import _write
from tests.support.helpers import DEMO_SNAPSHOTS, assert_one_line_error, load_demo_builder, run_cli

PAST_THE_END = "9999-12-31T23:59:59-01:00"  # RFC 3339, and one hour after the last instant UTC can hold


@pytest.fixture(scope="module")
def check_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    repo = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(repo)
    _code, out, _err = run_cli(["check", "--repo", str(repo), "-o", "json"])
    return out


@pytest.fixture
def check_report(check_text: str) -> dict[str, object]:
    """A fresh copy for each test to edit."""
    return dict(json.loads(check_text))


def _first_finding(report: dict[str, object]) -> dict[str, object]:
    clusters = report["clusters"]
    assert isinstance(clusters, list)
    return next(f for c in clusters for f in c["findings"])


def test_a_saved_first_seen_past_the_end_of_time_is_a_one_line_error(
    check_report: dict[str, object], tmp_path: Path
) -> None:
    _first_finding(check_report)["firstSeen"] = PAST_THE_END
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(check_report))
    assert_one_line_error(*run_cli(["report", "merge", str(saved)]), str(saved), "out of range")


@pytest.mark.parametrize("field", [("userAgent", 5), ("groups", "abc"), ("user", None)])
def test_a_saved_last_write_of_the_wrong_type_is_a_one_line_error(
    check_report: dict[str, object], tmp_path: Path, field: tuple[str, object]
) -> None:
    written = {
        "user": "alice",
        "groups": [],
        "userAgent": None,
        "sourceIP": None,
        "time": "2026-11-30T14:02:00Z",
        "verb": "patch",
        "identity": "person",
        "auditID": "a1",
        "impersonatedBy": None,
        "caveat": None,
    }
    written[field[0]] = field[1]
    _first_finding(check_report)["lastWrite"] = written
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(check_report))
    assert_one_line_error(*run_cli(["report", "merge", str(saved)]), str(saved), f"lastWrite.{field[0]}")


def test_a_snapshot_taken_past_the_end_of_time_is_a_one_line_error(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(
        (DEMO_SNAPSHOTS / "prod-addon.yaml").read_text().replace("'2026-12-01T07:00:00.000000Z'", f"'{PAST_THE_END}'")
    )
    assert_one_line_error(
        *run_cli(["doctor", "--snapshot", str(snapshot)]),
        str(snapshot),
        "kai-gitops.io/taken-at is not an RFC 3339 time",
    )


def test_an_audit_event_past_the_end_of_time_or_without_a_zone_is_no_write() -> None:
    event = {
        "stage": "ResponseComplete",
        "verb": "patch",
        "user": {"username": "alice"},
        "responseStatus": {"code": 200},
        "sourceIPs": ["10.0.0.7"],
        "auditID": "0b3f2e1a-aaaa",
    }
    assert _write({**event, "stageTimestamp": "2026-11-30T14:02:00.5Z"}) is not None
    assert _write({**event, "stageTimestamp": PAST_THE_END}) is None
    assert _write({**event, "stageTimestamp": "2026-11-30T14:02:00"}) is None  # whose zone? not this machine's


def test_a_client_chosen_audit_id_or_source_address_is_not_kept() -> None:
    event = {
        "stage": "ResponseComplete",
        "verb": "patch",
        "user": {"username": "alice"},
        "responseStatus": {"code": 200},
        "stageTimestamp": "2026-11-30T14:02:00Z",
    }
    kept = _write({**event, "auditID": "0b3f2e1a-5c6d-4e7f-8a9b-0c1d2e3f4a5b", "sourceIPs": ["10.0.0.7"]})
    assert kept is not None and (kept.audit_id, kept.source_ip) == ("0b3f2e1a-5c6d-4e7f-8a9b-0c1d2e3f4a5b", "10.0.0.7")
    odd = _write({**event, "auditID": "x token=ghp_" + "a" * 36, "sourceIPs": ["ghp_" + "a" * 36]})
    assert odd is not None and (odd.audit_id, odd.source_ip) == ("", None)


def test_every_free_text_field_of_a_last_write_is_redacted() -> None:
    token = "ghp_" + "b" * 36
    write = LastWrite("alice", Identity.PERSON, token, token, token, source_ip=token, caveat=token)
    assert token not in json.dumps(write.redacted().to_dict()) and token not in write.redacted().sentence()


def test_a_time_past_the_end_of_time_is_shown_as_written() -> None:
    assert short_time(PAST_THE_END) == PAST_THE_END
    assert short_time("2026-11-30T15:02:11.5+01:00") == "2026-11-30 14:02 UTC"


def test_last_write_times_are_shown_in_utc_as_attribution_times_are() -> None:
    write = LastWrite("alice", Identity.PERSON, "2026-11-30T15:02:11+01:00", "patch", "a1")
    assert write.sentence().endswith("at 2026-11-30 14:02 UTC")


@pytest.mark.parametrize("text", ["1e999999999", "1e400", "9999999999999999999999999999Ki"])
def test_a_quantity_past_any_kubernetes_quantity_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="quantity"):
        parse_quantity(text)


def test_an_anonymous_write_and_a_person_acting_as_the_operator_stand_out() -> None:
    assert classify("system:anonymous", None, AuditIdentities()) is Identity.PERSON
    assert classify("system:kube-controller-manager", None, AuditIdentities()) is Identity.SYSTEM


def test_an_edited_policy_report_timestamp_is_not_a_sighting() -> None:
    old = {
        "results": [
            {"properties": {"fingerprint": "a"}, "timestamp": {"seconds": "soon", "nanos": 0}},
            {"properties": {"fingerprint": "b"}, "timestamp": {"seconds": 1764600000, "nanos": 0}},
        ]
    }
    assert _first_seen(old) == {"b": {"seconds": 1764600000, "nanos": 0}}
