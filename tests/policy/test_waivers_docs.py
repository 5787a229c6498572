"""docs/policies.md#waivers says what the waiver code does: its examples parse and waive what they claim,
`expires` is the last day, `subject: "*"` covers the findings about a file (no subject), and the pages where
findings are explained point there."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import yaml

from reconciler.app.scaffold import ClusterSeed, ScaffoldSettings, scaffold_files
from reconciler.checks.policy.waivers import ALLOWED, load_waivers
from tests.support.helpers import ROOT, make_repo, run_cli

POLICIES = ROOT / "docs" / "policies.md"
RULES = ROOT / "policies" / "kai_gitops" / "rules"


def waivers_section() -> str:
    return POLICIES.read_text().split("## Waivers\n", 1)[1].split("\n## ", 1)[0]


def documented_example() -> list[dict[str, Any]]:
    (block,) = re.findall(r"```yaml\n(.*?)```", waivers_section(), re.S)
    waivers: list[dict[str, Any]] = yaml.safe_load(block)["waivers"]
    return waivers


def test_the_documented_example_parses_and_the_table_names_every_field() -> None:
    example = documented_example()
    (star,) = [w for w in example if w["subject"] == "*"]
    assert star["rule"] == "KAI-V-004"
    assert len(load_waivers(yaml.safe_dump({"waivers": example}))) == len(example)
    table = re.findall(r"^\| `(\w+)` \| (yes|no) \|", waivers_section(), re.M)
    assert {field for field, _ in table} == set(ALLOWED)
    assert {field for field, required in table if required == "no"} == {"cluster"}


def test_the_rules_documented_as_subjectless_report_no_subject() -> None:
    paragraph = waivers_section().split("**The subject of a finding**", 1)[1].split("\n\n", 1)[0]
    ranges = re.findall(r"`([A-Z]+-[A-Z]+-)(\d{3})` to `\1(\d{3})`", paragraph)
    rules = {f"{prefix}{n:03d}" for prefix, first, last in ranges for n in range(int(first), int(last) + 1)}
    rules |= set(re.findall(r"`([A-Z]+-[A-Z]+-\d{3})`", paragraph))
    assert len(rules) > 15
    for rule in sorted(rules):
        (source,) = RULES.glob(f"*/{rule.lower().replace('-', '_')}.rego")
        assert set(re.findall(r'"subject": ([\w.]+)', source.read_text())) == {"null"}, rule


def check(repo: Path) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(["check", "--repo", repo, "-o", "json"])
    assert code in (0, 2), stderr
    return code, json.loads(stdout)


def findings(report: dict[str, Any]) -> list[tuple[str, bool]]:
    every = [*report["repository"]["findings"], *(f for c in report["clusters"] for f in c["findings"])]
    return sorted((f["rule"], f["waived_by"] is not None) for f in every)


def repo_with_waiver(tmp_path: Path, waiver: dict[str, Any] | None) -> Path:
    """A scaffolded standalone cluster `lab` whose values leave one canonical value to the chart (KAI-V-004)."""
    files = scaffold_files(ScaffoldSettings(tmp_path, (ClusterSeed("lab", "standalone"),), ci=None))
    values = "clusters/lab/kai-values.yaml"
    files[values] = files[values].replace("  placementStrategy: binpack\n", "")
    files["kai-gitops.yaml"] = files["kai-gitops.yaml"].replace(
        "    # sharedCluster: {intent: dedicated}", "    sharedCluster: {intent: dedicated}"
    )
    if waiver is not None:
        files["kai-gitops-waivers.yaml"] = yaml.safe_dump({"waivers": [waiver]})
    path, _ = make_repo(tmp_path, dict(files))
    return path


def star_waiver(**changes: Any) -> dict[str, Any]:
    (star,) = [w for w in documented_example() if w["subject"] == "*"]
    return {**star, "cluster": "lab", "expires": date.today().isoformat(), **changes}


def test_subject_star_waives_a_finding_about_a_file_until_its_last_day(tmp_path: Path) -> None:
    code, report = check(repo_with_waiver(tmp_path / "none", None))
    assert (code, findings(report)) == (2, [("KAI-V-004", False)])
    assert report["clusters"][0]["findings"][0]["subject"] is None

    code, report = check(repo_with_waiver(tmp_path / "today", star_waiver()))  # `expires` is the last day
    assert (code, findings(report)) == (0, [("KAI-V-004", True)])


def test_an_expired_waiver_brings_its_finding_back_and_is_a_warning(tmp_path: Path) -> None:
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    code, report = check(repo_with_waiver(tmp_path, star_waiver(expires=yesterday)))
    assert (code, findings(report)) == (2, [("KAI-V-004", False), ("KAI-W-001", False)])


def test_an_object_pattern_does_not_match_a_finding_without_a_subject(tmp_path: Path) -> None:
    code, report = check(repo_with_waiver(tmp_path, star_waiver(subject="ConfigMap/*/*")))
    assert (code, findings(report)) == (2, [("KAI-V-004", False), ("KAI-W-002", False)])


def test_where_findings_are_explained_points_at_the_waivers() -> None:
    assert "(policies.md#waivers)" in (ROOT / "docs" / "outputs.md").read_text()
    assert "(docs/policies.md#waivers)" in (ROOT / "README.md").read_text()
    assert "docs/policies.md#waivers" in (ROOT / "reconciler/data/init/kai-gitops-waivers.yaml").read_text()
