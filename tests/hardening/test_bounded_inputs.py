"""Every input file and answer is read to a byte cap and parsed to a depth bound: a report, a saved plan, an audit
log line, a snapshot, an OPA answer. A special file (a FIFO, a device) or an endless stream is refused or read to
the cap; a value nested deeper than the code above can walk is one line naming the file and line. Before these
bounds: RecursionError (with a traceback for an audit log's first line), MemoryError, or a hang."""

from __future__ import annotations

import io
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.capped import MAX_JSON_DEPTH, TooDeep, load_json, read_input, too_deep_at
from reconciler.core.errors import UserError
from reconciler.report.report import SCHEMA_VERSION
from tests.support.helpers import assert_one_line_error, run_cli

DEEP = 900  # within what orjson and the json module parse, past what the code reading the value can walk


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def test_the_depth_bound_finds_the_first_container_past_it() -> None:
    text = b'{"s": "[[[[{{{{", "a": ' + json.dumps(nested(8)).encode() + b"}"
    assert too_deep_at(text, 9) is None
    offset = too_deep_at(text, 8)
    assert offset is not None and text[offset : offset + 1] in (b"[", b"{")
    assert too_deep_at(text[:offset], 8) is None  # the string's brackets do not count
    with pytest.raises(TooDeep):
        load_json(json.dumps(nested(MAX_JSON_DEPTH + 1)).encode())
    assert load_json(json.dumps(nested(MAX_JSON_DEPTH)).encode()) == nested(MAX_JSON_DEPTH)


def test_an_escaped_quote_does_not_end_a_string_for_the_depth_bound() -> None:
    text = json.dumps({"s": '\\"' + "[" * 200, "t": nested(5)}).encode()
    assert too_deep_at(text, 10) is None


# -- reports: --previous-report and report merge --------------------------------------------------------------


def test_report_merge_of_a_device_is_refused_before_it_is_read() -> None:
    assert_one_line_error(*run_cli(["report", "merge", "/dev/zero"]), "/dev/zero: report is a device, not a file")


def test_previous_report_of_a_device_is_refused_before_it_is_read(tmp_path: Path) -> None:
    code, out, err = run_cli(["check", "--repo", tmp_path, "--previous-report", "/dev/zero"])
    assert_one_line_error(code, out, err, "/dev/zero: previous report: report is a device, not a file")


class _Endless(io.RawIOBase):
    """stdin that never ends: `yes | kai-gitops report merge -`."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer)
        buffer[:size] = b"y" * size
        self.given += size
        return size


def test_report_merge_of_an_endless_stream_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from reconciler.cli import main
    from reconciler.report import reader

    monkeypatch.setattr(reader, "MAX_REPORT_BYTES", 1_000_000)
    stdin = _Endless()
    result = CliRunner().invoke(main, ["report", "merge", "-"], input=stdin)  # type: ignore[arg-type]
    assert_one_line_error(result.exit_code, result.stdout, result.stderr, "-: report is over the 1,000,000 byte limit")
    assert stdin.given <= 1_000_000 + 2 * 256 * 1024


def _deep_report(tmp_path: Path) -> tuple[Path, int]:
    """A check report (one cluster, one finding) whose finding's desired value nests DEEP levels."""
    finding = {
        "rule": "KAI-D-001",
        "kind": "drift",
        "severity": "error",
        "message": "m",
        "cluster": "prod",
        "subject": None,
        "location": None,
        "desired": nested(DEEP),
        "live": None,
        "fix": None,
        "title": "t",
        "waived_by": None,
        "details": {},
    }
    report = {
        "tool": "kai-gitops",
        "schemaVersion": SCHEMA_VERSION,
        "command": "check",
        "failOn": "error",
        "rules": [],
        "repository": {"findings": []},
        "clusters": [{"cluster": "prod", "findings": [finding], "rulesEvaluated": []}],
    }
    text = json.dumps(report, indent=1)
    path = tmp_path / "deep.json"
    path.write_text(text)
    offset = too_deep_at(text.encode())
    assert offset is not None
    return path, text[:offset].count("\n") + 1


def test_a_report_nested_too_deep_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    path, line = _deep_report(tmp_path)
    assert_one_line_error(
        *run_cli(["report", "merge", path, "-o", "json"]),
        f"{path}:{line}: report nests deeper than {MAX_JSON_DEPTH} levels",
    )


# -- saved plans: --plan -------------------------------------------------------------------------------------


def _reconcile_plan(tmp_path: Path, plan: str | Path) -> tuple[int, str, str]:
    return run_cli(["reconcile", "--repo", tmp_path, "--context", "prod", "--plan", plan, "--apply"])


def test_a_plan_on_a_device_is_refused_not_read_to_memory_exhaustion(tmp_path: Path) -> None:
    assert_one_line_error(*_reconcile_plan(tmp_path, "/dev/zero"), "/dev/zero: plan is a device, not a file")


def test_a_plan_on_a_fifo_nobody_writes_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    result: list[tuple[int, str, str]] = []
    reader = threading.Thread(target=lambda: result.append(_reconcile_plan(tmp_path, fifo)), daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # it waits for a writer: be one, so the thread ends, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(30)
        pytest.fail("--plan waited on a FIFO nobody writes")
    assert_one_line_error(*result[0], f"{fifo}: plan is a FIFO, not a file")


def test_a_plan_past_its_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.plans import saved

    monkeypatch.setattr(saved, "PLAN_MAX_BYTES", 1000)
    plan = tmp_path / "plan.json"
    plan.write_bytes(b" " * 1001)
    assert_one_line_error(*_reconcile_plan(tmp_path, plan), f"{plan}: plan is over the 1,000 byte limit")


def test_a_plan_nested_too_deep_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    """A plan of valid shape whose manifest nests deeper than the plan's own id (a hash of its JSON) can encode."""
    change = {
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "namespace": "ns"},
        "operation": "update",
        "fields": [],
        "manifest": {"data": nested(DEEP)},
    }
    plan = tmp_path / "plan.json"
    plan.write_text(
        '{"kind": "kai-gitops/plan", "version": 1, "cluster": "prod", "operator": [],\n"changes": '
        + json.dumps([change])
        + "}"
    )
    assert_one_line_error(*_reconcile_plan(tmp_path, plan), f"{plan}:2: plan nests deeper than {MAX_JSON_DEPTH} levels")


# -- audit log lines ------------------------------------------------------------------------------------------


def _deep_event(depth: int) -> bytes:
    event = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "stage": "ResponseComplete",
        "verb": "update",
        "objectRef": {"resource": "queues", "name": "default-queue"},
        "requestObject": "DEEP",
    }
    deep = b'{"a": ' * depth + b"1" + b"}" * depth  # past what json.dumps itself can write
    return json.dumps(event).encode().replace(b'"DEEP"', deep) + b"\n"


@pytest.mark.parametrize("depth", [DEEP, 5_000])
def test_a_deeply_nested_first_audit_line_is_one_line_naming_file_and_line(tmp_path: Path, depth: int) -> None:
    from reconciler.sources.audit_log import check_audit_log

    log = tmp_path / "audit.log"
    log.write_bytes(_deep_event(depth))
    with pytest.raises(UserError) as caught:
        check_audit_log(str(log))
    assert caught.value.where == f"{log}:1"


@pytest.mark.parametrize("depth", [DEEP, 5_000])
def test_a_deeply_nested_audit_line_later_is_skipped_as_malformed(
    tmp_path: Path, depth: int, caplog: pytest.LogCaptureFixture
) -> None:
    from reconciler.app.last_writes import audit_target
    from reconciler.core.resources import queue_ref
    from reconciler.sources.audit_log import last_writes
    from tests.support.audit_log import line, story

    events = [line(e) for e in story()]
    log = tmp_path / "audit.log"
    log.write_bytes(b"".join([*events[:3], _deep_event(depth), *events[3:]]))
    target = audit_target(queue_ref("default-queue"))
    assert target is not None
    found = last_writes([str(log)], [target], datetime.now(UTC))
    assert found[target].user == "alice@example.com"
    assert f"{log}:4: 1 malformed audit log line(s) skipped" in caplog.text


# -- snapshots ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.helpers import load_demo_builder

    repo = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(repo)
    return repo


def test_a_json_snapshot_nested_too_deep_is_one_line_naming_file_and_line(demo: Path, tmp_path: Path) -> None:
    """kai-config's spec as the differ walks it and the report encodes it: past their depth before the bound."""
    from ruamel.yaml import YAML

    from tests.support.helpers import DEMO_SNAPSHOTS

    snapshot = YAML(typ="safe").load((DEMO_SNAPSHOTS / "prod-addon.yaml").read_text())
    config = next(item for item in snapshot["items"] if item["kind"] == "Config")
    config["spec"]["admission"]["queueLabelSelector"] = nested(DEEP // 2)
    snap = tmp_path / "snapshot.json"
    text = json.dumps(snapshot, indent=1, default=str)
    snap.write_text(text)
    offset = too_deep_at(text.encode())
    assert offset is not None
    line = text[:offset].count("\n") + 1
    code, out, err = run_cli(["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", snap, "-o", "json"])
    assert_one_line_error(code, out, err, f"{snap}:{line}: snapshot nests deeper than {MAX_JSON_DEPTH} levels")


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_snapshot_on_a_special_file_is_refused(tmp_path: Path, special: str) -> None:
    path = special
    if special == "fifo":
        path = str(tmp_path / "snap.fifo")
        os.mkfifo(path)
    assert_one_line_error(*run_cli(["doctor", "--snapshot", path]), f"{path}: snapshot is a ")


# -- the capped read itself -----------------------------------------------------------------------------------


def test_read_input_reads_a_regular_file_and_a_held_descriptor(tmp_path: Path) -> None:
    file = tmp_path / "r.json"
    file.write_bytes(b"{}")
    assert read_input(str(file), 2, "report") == b"{}"
    with pytest.raises(UserError, match="over the 1 byte limit"):
        read_input(str(file), 1, "report")
    read_end, write_end = os.pipe()  # a shell's <(command): /dev/fd/N, a pipe this process holds
    os.write(write_end, b"[1]")
    os.close(write_end)
    try:
        assert read_input(f"/dev/fd/{read_end}", 10, "report") == b"[1]"
    finally:
        os.close(read_end)
