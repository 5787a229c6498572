"""The program's entry (`kai-gitops`, `python -m reconciler`) sets up the process for one command, then runs it."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

import reconciler.cli as cli
from reconciler.core.collector import ONE_RUN_THRESHOLD


def test_the_program_collects_young_objects_less_often(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = gc.get_threshold()
    monkeypatch.setattr(cli, "main", lambda: "ran")
    try:
        assert cli.run() == "ran"  # the command's own result comes back to the script, which exits with it
        assert gc.get_threshold() == (ONE_RUN_THRESHOLD, *saved[1:])
    finally:
        gc.set_threshold(*saved)


@pytest.mark.parametrize("module", ["reconciler", "reconciler.cli"])
def test_python_dash_m_starts_the_program_the_same_way(module: str) -> None:
    probe = (
        "import gc, runpy, reconciler.cli as c; c.main = lambda: print(gc.get_threshold()[0]); "
        f"runpy.run_module({module!r}, run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == str(ONE_RUN_THRESHOLD), done.stderr


def test_the_installed_script_starts_through_run_and_a_usage_error_still_exits_1() -> None:
    script = Path(sys.executable).parent / "kai-gitops"
    if not script.exists():
        pytest.skip("kai-gitops is not installed next to this interpreter")
    assert "from reconciler.cli import run" in script.read_text()
    done = subprocess.run([str(script), "check", "--no-such-option"], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "no-such-option" in done.stderr  # a usage error exits 1, not click's 2
