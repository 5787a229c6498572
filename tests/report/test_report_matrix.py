"""`report matrix`: a fleet's report as one cluster × rule table (the hub's fleet summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import assert_one_line_error, load_fleet_builder, run_cli

CLUSTERS = 8  # fleet-0007 has a mistake and the waiver of KAI-V-001


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    tmp = tmp_path_factory.mktemp("matrix")
    load_fleet_builder().write_fleet_repo(tmp / "repo", CLUSTERS)
    code, stdout, stderr = run_cli(["check", "--repo", tmp / "repo", "-o", "json"])
    assert code in (0, 2), stderr
    (tmp / "report.json").write_text(stdout)
    return tmp / "report.json", json.loads(stdout)


def test_a_row_per_cluster_and_a_column_per_rule_that_found_something(report: tuple[Path, dict]) -> None:
    path, data = report
    code, stdout, _ = run_cli(["report", "matrix", path])
    assert code == 0
    header, rule, *rows = stdout.splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")][2:]
    found = {f["rule"] for c in data["clusters"] for f in c["findings"]}
    assert sorted(c.split(" (")[0] for c in columns) == sorted(found)
    assert rule == "|---|---|" + "---|" * len(columns)
    assert [r.split("|")[1].strip() for r in rows] == [c["cluster"] for c in data["clusters"]]
    for row, cluster in zip(rows, data["clusters"], strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        open_findings = [f for f in cluster["findings"] if f["waived_by"] is None]
        assert int(cells[1]) == len(open_findings)
        for column, cell in zip(columns, cells[2:], strict=True):
            rule_id = column.split(" (")[0]
            count = sum(1 for f in open_findings if f["rule"] == rule_id)
            waived = sum(1 for f in cluster["findings"] if f["rule"] == rule_id and f["waived_by"] is not None)
            assert cell == ("" if not count and not waived else f"{count}" + (f" (+{waived} waived)" if waived else ""))


def test_a_waived_finding_is_counted_apart(report: tuple[Path, dict]) -> None:
    _, stdout, _ = run_cli(["report", "matrix", report[0]])
    assert "(+1 waived)" in next(line for line in stdout.splitlines() if line.startswith("| fleet-0007 |"))


def test_a_clean_fleet_says_so(report: tuple[Path, dict], tmp_path: Path) -> None:
    data = json.loads(report[0].read_text())
    for cluster in data["clusters"]:
        cluster["findings"] = []
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(data))
    assert run_cli(["report", "matrix", clean])[1] == f"No findings in {CLUSTERS} cluster(s).\n"


def test_a_file_that_is_not_a_report_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert_one_line_error(*run_cli(["report", "matrix", bad]), str(bad))


def test_a_context_name_reaches_the_table_as_text(report: tuple[Path, dict], tmp_path: Path) -> None:
    """A `doctor` report names its cluster after a kube context, which may hold Markdown and HTML."""
    data = json.loads(report[0].read_text())
    data["command"] = "doctor"
    data["clusters"] = [c for c in data["clusters"] if c["cluster"] == "fleet-0007"]
    data["clusters"][0]["cluster"] = "<img_src=x>*prod*|`eu`"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    code, stdout, stderr = run_cli(["report", "matrix", odd])
    assert code == 0, stderr
    row = stdout.splitlines()[2]
    assert row.startswith("| &lt;img\\_src=x&gt;\\*prod\\*\\|\\`eu\\` | ")
    assert "<img" not in row
    assert len(row.strip("|").split(" | ")) == len(stdout.splitlines()[0].strip("|").split(" | "))
