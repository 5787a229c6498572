"""`reconcile --help` and the scope page name every kind a plan may write (plans/writable.py)."""

from __future__ import annotations

from pathlib import Path

from reconciler.plans.writable import PLANNED
from tests.support.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
# How the help and the page name each planned kind: the operator's Config is only ever kai-config
NAMED = {"Queue": "Queues", "Node": "node labels", "Config": "kai-config", "SchedulingShard": "SchedulingShards"}


def test_reconcile_help_names_every_kind_a_plan_may_write() -> None:
    code, out, err = run_cli(["reconcile", "--help"])
    assert code == 0, err
    summary = " ".join(out.split())
    assert {r.kind for r in PLANNED} == set(NAMED)  # a new writable kind needs its name here
    assert all(NAMED[r.kind] in summary for r in PLANNED), summary
    code, out, _ = run_cli(["--help"])
    line = next(line for line in out.splitlines() if line.strip().startswith("reconcile"))
    assert "may fix (Queues, kai-config" in line  # the rest is cut to the terminal width


def test_the_scope_page_names_every_kind_and_the_sensitive_rule() -> None:
    page = (ROOT / "docs" / "reconcile-scope.md").read_text()
    assert all(NAMED[r.kind] in page for r in PLANNED)
    assert "KAI-S-001" in page and "allowSensitiveWrites" in page
