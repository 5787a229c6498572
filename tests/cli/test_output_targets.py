"""Output targets that are not regular files (core/files.py), for `-o`, `--plan-out`, `--metrics-file`, the
snapshot writer and the audit log: a FIFO, a character device and the process's own descriptors are written
in place, never replaced by a regular file; a directory, a socket or a block device is a one-line error; the
audit log never follows a symbolic link.

The character-device tests write to the real /dev/null and, as root, to a null device made in the test's
own directory: a regression shows on that one without touching the machine's /dev/null.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.core.files import write_atomically
from reconciler.reconcile.audit import AuditLog
from reconciler.sources.snapshot_writer import SnapshotWriter
from tests.support.helpers import DEMO_SNAPSHOTS, ROOT, assert_one_line_error, run_cli
from tests.support.reconcile_support import Demo, demo_cluster

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
NULL = os.makedev(1, 3)


def check(repo: Path, *args: object) -> tuple[int, str, str]:
    return run_cli(["check", "--repo", repo, *args])


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


@contextmanager
def fifo_reader(path: Path) -> Iterator[list[bytes]]:
    """A FIFO at `path` with a reader thread; yields what it read once the block ends."""
    os.mkfifo(path)
    got: list[bytes] = []

    def read() -> None:
        with path.open("rb") as fifo:
            got.append(fifo.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield got
    finally:
        reader.join(timeout=30)
        if reader.is_alive():  # the writer never came: let the reader see end-of-file
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(timeout=5)
    assert stat.S_ISFIFO(path.lstat().st_mode), "the FIFO was replaced by a file"


@pytest.fixture(params=["dev-null", pytest.param("own-null", marks=ROOT_ONLY)])
def null_device(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    if request.param == "dev-null":
        path = Path("/dev/null")
    else:
        path = tmp_path / "null"
        os.mknod(path, 0o666 | stat.S_IFCHR, NULL)
    yield path
    found = path.lstat()
    assert stat.S_ISCHR(found.st_mode) and found.st_rdev == NULL, f"{path} is no longer the null device"


# -- written in place -----------------------------------------------------------------------------------


def test_report_to_a_fifo_reaches_its_reader(demo_repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "sarif.pipe"
    with fifo_reader(fifo) as got:
        code, _, stderr = check(demo_repo, "-o", f"sarif={fifo}")
    assert code == 2, stderr
    assert json.loads(got[0])["version"] == "2.1.0"


def test_report_to_a_character_device_leaves_the_device(demo_repo: Path, null_device: Path) -> None:
    code, stdout, stderr = check(demo_repo, "-o", f"sarif={null_device}")
    assert (code, stdout, stderr) == (2, "", "")


def test_metrics_file_on_a_character_device_is_written_without_a_warning(demo_repo: Path, null_device: Path) -> None:
    code, _, stderr = check(demo_repo, "--metrics-file", null_device, "--log-format", "text")
    assert code == 2 and "metrics not written" not in stderr, stderr


def test_plan_out_to_a_fifo_reaches_its_reader(demo_repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "plan.pipe"
    with fifo_reader(fifo) as got:
        code, _, stderr = run_cli(
            [
                "reconcile",
                "--repo",
                demo_repo,
                "--cluster",
                "prod-addon",
                "--snapshot",
                DEMO_SNAPSHOTS / "prod-addon.yaml",
                "--plan-out",
                fifo,
            ]
        )
    assert code == 2, stderr
    assert json.loads(got[0])["kind"] == "kai-gitops/plan"


def test_snapshot_streams_to_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "snapshot.pipe"
    with fifo_reader(fifo) as got, SnapshotWriter(str(fifo)) as writer:
        writer.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        writer.commit()
    assert b"kind: List" in got[0] and b"name: n1" in got[0]


def test_own_descriptor_is_written_through_not_replaced(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        write_atomically(f"/dev/fd/{write_end}", "through the pipe\n", 0o600)
        os.close(write_end)
        assert os.read(read_end, 100) == b"through the pipe\n"
    finally:
        os.close(read_end)


def test_dev_stdout_redirected_to_a_file_is_appended_to_not_truncated(tmp_path: Path) -> None:
    """`kai-gitops … > out` with /dev/stdout as a target: what was printed before stays, in order."""
    script = (
        "import sys; from reconciler.core.files import write_atomically; print('printed first'); "
        "write_atomically('/dev/stdout', 'written second\\n', 0o600)"
    )
    out = tmp_path / "out"
    with out.open("w") as stdout:
        subprocess.run([sys.executable, "-c", script], stdout=stdout, check=True, cwd=ROOT, timeout=60)
    assert out.read_text() == "printed first\nwritten second\n"
    assert Path("/dev/stdout").is_symlink()


def test_dash_o_to_dev_stdout_is_stdout(demo_repo: Path) -> None:
    code, stdout, _ = check(demo_repo, "-o", "json=/dev/stdout")
    assert code == 2 and json.loads(stdout)["tool"] == "kai-gitops"
    assert_one_line_error(*check(demo_repo, "-o", "json=/dev/stdout", "-o", "text"), "json cannot share stdout")


def test_audit_log_appends_to_a_fifo(demo: Demo, tmp_path: Path) -> None:
    fifo = tmp_path / "audit.pipe"
    with fifo_reader(fifo) as got:
        code, out, err = demo.reconcile("--apply", "--audit-log", fifo)
    assert code == 2 and "Apply complete: 3 applied" in out, out + err  # 2: the operator's findings remain
    results = [json.loads(line)["result"] for line in got[0].splitlines()]
    assert results.count("applied") == 3 and results.count("started") == 3


# -- refused --------------------------------------------------------------------------------------------


def test_directory_target_is_a_one_line_error(demo_repo: Path, tmp_path: Path) -> None:
    assert_one_line_error(
        *check(demo_repo, "-o", f"sarif={tmp_path}"), str(tmp_path), "is a directory, not a file", "-o FMT=PATH"
    )


@pytest.mark.parametrize("target", ["/sys/kernel/report.sarif", "/dev/full"], ids=["read-only-directory", "full"])
def test_a_target_that_refuses_the_write_is_a_one_line_error(demo_repo: Path, target: str) -> None:
    """A directory nobody may write to (as root, /sys refuses creating a file) and a full device."""
    assert_one_line_error(*check(demo_repo, "-o", f"sarif={target}"), f"{target}: cannot write report", "-o FMT=PATH")


def test_socket_target_is_a_one_line_error_and_stays(demo_repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert_one_line_error(*check(demo_repo, "-o", f"sarif={path}"), str(path), "is a socket, not a file")
        assert stat.S_ISSOCK(path.lstat().st_mode)


@ROOT_ONLY
def test_block_device_target_is_refused_everywhere(demo_repo: Path, tmp_path: Path) -> None:
    device = tmp_path / "disk"
    os.mknod(device, 0o600 | stat.S_IFBLK, os.makedev(7, 250))
    assert_one_line_error(*check(demo_repo, "-o", f"sarif={device}"), str(device), "is a block device")
    assert_one_line_error(
        *run_cli(
            [
                "reconcile",
                "--repo",
                demo_repo,
                "--cluster",
                "prod-addon",
                "--snapshot",
                DEMO_SNAPSHOTS / "prod-addon.yaml",
                "--plan-out",
                device,
            ]
        ),
        str(device),
        "is a block device",
        "--plan-out",
    )
    with pytest.raises(UserError, match="is a block device, not a file"):
        SnapshotWriter(str(device)).__enter__()
    assert stat.S_ISBLK(device.lstat().st_mode)


def test_symlinked_audit_log_is_refused_before_any_write(demo: Demo, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not the audit log\n")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(elsewhere)
    assert_one_line_error(
        *demo.reconcile("--apply", "--audit-log", link), str(link), "is a symbolic link", "--audit-log"
    )
    assert elsewhere.read_text() == "not the audit log\n" and link.is_symlink()
    assert demo.writes() == []


def test_dangling_audit_log_symlink_creates_nothing(tmp_path: Path) -> None:
    link = tmp_path / "audit.jsonl"
    link.symlink_to(tmp_path / "planted")
    with pytest.raises(UserError, match="is a symbolic link"):
        AuditLog(str(link), plan_id="p", cluster="c", server="s", holder="h")
    assert not (tmp_path / "planted").exists()
