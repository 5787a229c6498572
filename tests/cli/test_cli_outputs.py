"""`-o FMT[=PATH]` end to end on the demo pull request: several formats in one run, files, stdout, summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from junitparser import JUnitXml

from reconciler.outputs import FORMATS
from tests.support.helpers import assert_one_line_error, load_demo_builder, run_cli


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target


def test_one_run_writes_every_format(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(
        [
            "check",
            "--repo",
            demo,
            "--base",
            "HEAD~1",
            "-o",
            "text",
            "-o",
            f"sarif={out}/r.sarif",
            "-o",
            f"gitlab={out}/cq.json",
            "-o",
            f"junit={out}/j.xml",
            "-o",
            f"markdown={out}/c.md",
            "-o",
            f"json={out}/r.json",
            "-o",
            "github",
        ]
    )
    assert code == 2 and stderr == ""
    # text first (wrapped: beside github, no line of it may run as a workflow command), then the annotations
    assert re.match(r"::stop-commands::\w{32}\nkai-gitops check — cluster prod-addon", stdout)
    assert "\n::error file=clusters/lab/" in stdout
    assert json.loads((out / "r.sarif").read_text())["version"] == "2.1.0"
    assert {i["check_name"] for i in json.loads((out / "cq.json").read_text())} >= {"KAI-Q-001", "KAI-M-004"}
    assert len(list(JUnitXml.fromfile(str(out / "j.xml")))) == 2
    assert (out / "c.md").read_text().startswith("<!-- kai-gitops-report -->")
    assert json.loads((out / "r.json").read_text())["exitCode"] == 2
    assert not list(out.glob(".*tmp"))  # no temporary files left behind


def test_json_alone_on_stdout_is_unchanged(demo: Path) -> None:
    code, stdout, _ = run_cli(["check", "--repo", demo, "-o", "json"])
    assert code == 2 and json.loads(stdout)["schemaVersion"] == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-o", "yaml"], "unknown output format 'yaml'"),
        (["-o", "json", "-o", "text"], "json cannot share stdout with text"),
        (["-o", "sarif="], "names no file"),
        (["-o", "sarif=x.json", "-o", "gitlab=x.json"], "two outputs write the same file x.json"),
    ],
)
def test_bad_output_options_are_one_line_errors_before_the_run(demo: Path, args: list[str], needle: str) -> None:
    assert_one_line_error(*run_cli(["check", "--repo", demo, *args]), needle)


def test_unwritable_path_is_a_one_line_error(demo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert_one_line_error(*run_cli(["check", "--repo", demo, "-o", f"sarif={blocker}/r.sarif"]), "cannot write report")


def test_check_with_base_knows_the_lines_the_pull_request_changed(demo: Path) -> None:
    from reconciler.app.pipeline import run_check
    from reconciler.app.settings import GitSettings, RunSettings

    report = run_check(RunSettings(GitSettings(str(demo)), base_ref="HEAD~1"))
    assert report.changed_lines == {
        "clusters/lab/kai-values.yaml": frozenset({5, 13, 36, 47, 48, 49}),
        "clusters/lab/nvca-operator-values.yaml": frozenset({5}),
        "clusters/lab/queues.yaml": frozenset(range(12, 34)),  # two queues appended
        "environments/prod.yaml": frozenset({32}),
    }
    assert run_check(RunSettings(GitSettings(str(demo)))).changed_lines is None


def test_github_appends_the_job_summary_with_links(demo: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    env = {
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "acme/gitops",
    }
    _, stdout, _ = run_cli(["check", "--repo", demo, "-o", "github"], env=env)
    text = summary.read_text()
    assert text.startswith("# earlier step\n") and "## kai-gitops check: ❌ failed" in text
    assert "](https://github.com/acme/gitops/blob/" in text
    assert "::stop-commands::" in stdout


def test_the_cli_help_lists_every_registered_format_and_target() -> None:
    """(Each entry's code and type: tests/project/test_registries.py.)"""
    from reconciler.publish.targets import TARGETS

    code, stdout, _ = run_cli(["reconcile", "--help"])
    help_text = " ".join(stdout.split())
    assert code == 0 and f"FMT: {', '.join(FORMATS)}." in help_text
    assert all(f"{name}: {' '.join(entry.summary.split())}" in help_text for name, entry in TARGETS.items())


def test_demo_sarif_is_valid_and_live_findings_sit_on_the_cluster_entry(demo: Path, tmp_path: Path) -> None:
    from tests.support.helpers import DEMO_SNAPSHOTS
    from tests.support.outputs_sarif_format import validator

    code, _, stderr = run_cli(
        [
            "diff",
            "--repo",
            demo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            DEMO_SNAPSHOTS / "prod-addon.yaml",
            "-o",
            f"sarif={tmp_path}/d.sarif",
        ]
    )
    assert code == 2 and stderr == ""
    doc = json.loads((tmp_path / "d.sarif").read_text())
    assert not list(validator().iter_errors(doc))
    results = {r["ruleId"]: r for r in doc["runs"][-1]["results"]}
    entry = results["KAI-R-011"]["locations"][0]["physicalLocation"]
    assert entry["artifactLocation"]["uri"] == "kai-gitops.yaml"
    config = (demo / "kai-gitops.yaml").read_text().splitlines()
    assert "name: prod-addon" in config[entry["region"]["startLine"] - 1]


def test_demo_check_region_covers_the_whole_value(demo: Path, tmp_path: Path) -> None:
    run_cli(["check", "--repo", demo, "-o", f"sarif={tmp_path}/c.sarif"])
    doc = json.loads((tmp_path / "c.sarif").read_text())
    lab = next(r for r in doc["runs"] if r["automationDetails"]["id"] == "kai-gitops/check/lab-standalone/")
    quota = next(r for r in lab["results"] if r["ruleId"] == "KAI-Q-001")
    assert quota["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 35,
        "startColumn": 5,
        "endLine": 38,
        "endColumn": 25,
    }  # cpu: {quota, limit, overQuotaWeight}


def test_reconcile_keeps_its_plan_in_text_and_json_and_renders_other_formats(demo: Path, tmp_path: Path) -> None:
    from tests.support.helpers import DEMO_SNAPSHOTS

    code, stdout, stderr = run_cli(
        [
            "reconcile",
            "--repo",
            demo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            DEMO_SNAPSHOTS / "prod-addon.yaml",
            "-o",
            "json",
            "-o",
            f"sarif={tmp_path}/r.sarif",
        ]
    )
    assert code == 2 and stderr == ""
    assert json.loads(stdout)["plan"]["changes"]
    runs = json.loads((tmp_path / "r.sarif").read_text())["runs"]
    assert runs[-1]["automationDetails"]["id"] == "kai-gitops/reconcile/prod-addon/"
