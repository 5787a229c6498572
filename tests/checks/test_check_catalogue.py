"""The check catalogue (checks/catalogue.py): one row per Python check drives what diff, doctor, check and
reconcile run and which rules their reports say ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from reconciler.checks import catalogue
from reconciler.checks.catalogue import CATALOGUE, RUN_RULES, Check, ClusterContext, Needs, ran_rules
from reconciler.findings import builtin_rules
from reconciler.findings.finding import Kind, Severity
from reconciler.findings.rules import DoctorList, RuleMeta, Scope
from reconciler.model.desired import DesiredCluster
from reconciler.model.live import LiveState
from reconciler.outputs import render
from reconciler.report.reader import load_report
from tests.support.helpers import DEMO_SNAPSHOTS, load_demo_builder, run_cli

SNAPSHOT = DEMO_SNAPSHOTS / "prod-addon.yaml"
DESIRED = cast("DesiredCluster", object())  # whether a check applies reads only whether there is one
LIVE = LiveState("test")
PLANTED = RuleMeta(
    "KAI-X-900",
    "A check added in one table row",
    Severity.WARNING,
    Scope.STATIC,
    "why",
    "what to do",
    "tests/checks/test_check_catalogue.py",
)
PLANTED_LIVE = RuleMeta(
    "KAI-X-901",
    "A live check added in one table row",
    Severity.WARNING,
    Scope.LIVE,
    "why",
    "what to do",
    "tests/checks/test_check_catalogue.py",
)


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target


def report_of(args: list[Any], tmp_path: Path, name: str) -> dict[str, Any]:
    out = tmp_path / f"{name}.json"
    code, _, err = run_cli([*args, "-o", f"json={out}"])
    assert code in (0, 2), err
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def cluster_parts(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each cluster's part of a report: the report itself for one cluster, else its `clusters`."""
    parts: list[dict[str, Any]] = report.get("clusters", [report])
    return parts


def test_every_builtin_rule_is_in_one_row_or_raised_by_the_run() -> None:
    listed = [rule.id for check in CATALOGUE for rule in check.rules]
    assert len(listed) == len(set(listed)), "a rule in two rows would be listed twice as ran"
    run_wide = {rule.id for rule in RUN_RULES}
    assert not run_wide & set(listed)
    assert set(listed) | run_wide == set(builtin_rules.BY_ID)


def test_rules_needing_git_are_rules_of_their_row() -> None:
    for check in CATALOGUE:
        assert set(check.rules_needing_git) <= set(check.rules), check.name


@pytest.mark.parametrize(
    ("context", "needs", "on_snapshot"),
    [
        (ClusterContext("live-only", live=LIVE), {Needs.LIVE}, False),
        (ClusterContext("review", desired=DESIRED, reviewing=True), {Needs.GIT, Needs.CHANGE}, False),
        (
            ClusterContext("review+snapshot", desired=DESIRED, live=LIVE, snapshot=True, reviewing=True),
            {Needs.GIT, Needs.CHANGE},
            True,
        ),
        (ClusterContext("both", desired=DESIRED, live=LIVE), {Needs.GIT, Needs.LIVE, Needs.BOTH}, False),
    ],
    ids=lambda v: v.name if isinstance(v, ClusterContext) else "",
)
def test_what_applies_follows_from_what_the_context_holds(
    context: ClusterContext, needs: set[Needs], on_snapshot: bool
) -> None:
    """`on_snapshot`: a --live-snapshot's part of the cluster is there, for the rows that may read it."""
    for check in CATALOGUE:
        runs_on_snapshot = on_snapshot and check.snapshot_ok and check.needs in (Needs.LIVE, Needs.BOTH)
        assert check.applies(context) == (check.needs in needs or runs_on_snapshot), check.name


def test_the_table_has_rows_of_every_need_and_one_that_reads_a_snapshot() -> None:
    """The commands' tests below mean something only if each kind of row is there."""
    assert {check.needs for check in CATALOGUE} == set(Needs)
    assert any(check.snapshot_ok for check in CATALOGUE)
    assert any(check.rules_needing_git for check in CATALOGUE)


def test_a_rule_needing_git_is_not_said_to_have_run_without_it() -> None:
    ran = {rule.id for rule in ran_rules(ClusterContext("live-only", live=LIVE))}
    assert builtin_rules.CONFIG_NOT_HELM_OWNED.id not in ran
    assert builtin_rules.CONFIG_NOT_RECONCILED.id in ran


def test_a_rule_needing_the_cluster_is_not_said_to_have_run_on_git_alone() -> None:
    assert any(check.rules_needing_live for check in CATALOGUE)
    git_only = {rule.id for rule in ran_rules(ClusterContext("git-only", desired=DESIRED, reviewing=True))}
    with_live = {rule.id for rule in ran_rules(ClusterContext("both", desired=DESIRED, live=LIVE))}
    assert builtin_rules.KRM_MANAGED.id not in git_only and builtin_rules.KRM_MANAGED.id in with_live
    assert builtin_rules.KRM_RULES[0].id in git_only


def test_each_report_says_the_table_s_rules_ran_and_no_other_builtin(demo_repo: Path, tmp_path: Path) -> None:
    """What each command lists as ran, among the built-in rules, is exactly the rows that apply to it; and every
    built-in finding it reports is of a rule it lists."""
    repo = ["--repo", demo_repo, "--cluster", "prod-addon"]

    def rules_of(*needs: Needs, snapshot: bool = False, git: bool = True, live: bool = True) -> set[str]:
        rows = [c for c in CATALOGUE if c.needs in needs or (snapshot and c.snapshot_ok)]
        return {
            r.id
            for c in rows
            for r in c.rules
            if (git or r not in c.rules_needing_git) and (live or snapshot or r not in c.rules_needing_live)
        }

    expected = {
        "diff": rules_of(Needs.GIT, Needs.LIVE, Needs.BOTH),
        "doctor": rules_of(Needs.LIVE, git=False),
        "check": rules_of(Needs.GIT, Needs.CHANGE, live=False),
        "check-snapshot": rules_of(Needs.GIT, Needs.CHANGE, snapshot=True),
    }
    commands = {
        "diff": ["diff", *repo, "--snapshot", SNAPSHOT],
        "doctor": ["doctor", "--snapshot", SNAPSHOT],
        "check": ["check", *repo],
        "check-snapshot": ["check", *repo, "--live-snapshot", SNAPSHOT],
    }
    for name, args in commands.items():
        for part in cluster_parts(report_of(args, tmp_path, name)):
            ran = set(part["rulesEvaluated"])
            assert ran & set(builtin_rules.BY_ID) == expected[name], name
            found = {f["rule"] for f in part["findings"]} & set(builtin_rules.BY_ID)
            assert found <= ran, name


def test_a_row_added_to_the_table_runs_in_every_command_it_applies_to(
    demo_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One row, no other edit: its findings and its rule reach diff, doctor and check (and reconcile, which is
    diff's run)."""

    def planted(rule: RuleMeta) -> Check:
        def find(context: ClusterContext) -> list[Any]:
            return [rule.finding(Kind.VIOLATION, f"planted on {context.name}", context.name)]

        return Check(rule.id, (rule,), Needs.GIT if rule is PLANTED else Needs.LIVE, find)

    monkeypatch.setattr(catalogue, "CATALOGUE", (*CATALOGUE, planted(PLANTED), planted(PLANTED_LIVE)))
    repo = ["--repo", demo_repo, "--cluster", "prod-addon"]
    expected = {  # command: (runs the Git row, runs the live row)
        "diff": (["diff", *repo, "--snapshot", SNAPSHOT], True, True),
        "doctor": (["doctor", "--snapshot", SNAPSHOT], False, True),
        "doctor-git": (["doctor", *repo, "--snapshot", SNAPSHOT], True, True),
        "check": (["check", *repo], True, False),
        "reconcile": (["reconcile", *repo, "--snapshot", SNAPSHOT], True, True),
    }
    for name, (args, git_row, live_row) in expected.items():
        for part in cluster_parts(report_of(args, tmp_path, name)):
            found = {f["rule"] for f in part["findings"]}
            ran = set(part["rulesEvaluated"])
            for rule, runs in ((PLANTED, git_row), (PLANTED_LIVE, live_row)):
                assert (rule.id in found, rule.id in ran) == (runs, runs), (name, rule.id)


@pytest.mark.parametrize(
    ("section", "heading"), [(DoctorList.KAI, "KAI (kai-config"), (DoctorList.GANGS, "Gangs (PodGroups")]
)
def test_doctor_lists_the_rules_whose_metadata_puts_them_there(
    demo_repo: Path, tmp_path: Path, section: DoctorList, heading: str
) -> None:
    """Each of doctor's lists shows the rules that ran whose metadata names it, also when the report is read back
    (a saved report does not write the list; the built-in metadata says it)."""
    args = ["doctor", "--repo", demo_repo, "--cluster", "prod-addon", "--snapshot", SNAPSHOT]
    ran = report_of(args, tmp_path, "doctor")["rulesEvaluated"]
    listed = [r for r in ran if (meta := builtin_rules.BY_ID.get(r)) is not None and meta.listed_in is section]
    assert listed
    _, out, _ = run_cli(args)
    again = render(load_report(str(tmp_path / "doctor.json")), "text", color=False)
    for text in (out, again):
        part = text[text.index(heading) :]
        part = part[: part.index("\n\n")]
        shown = [line.split()[-1] for line in part.splitlines()[1:] if line.lstrip().startswith(("✓", "✗"))]
        assert sorted(shown) == sorted(listed)
