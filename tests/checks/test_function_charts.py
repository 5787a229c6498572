"""`check` over function charts: rendered with the real `helm template`, every finding at the chart's template.

The charts under repo-templates/function-charts are the examples users copy: each gives exactly the findings
its entry in kai-gitops.yaml says, through the real helm binary (tests/support/tools.py puts it on PATH).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.checks_function_charts import CHART_YAML, CONFIG, ENV, TEMPLATE_STS, chart_repo
from tests.support.helpers import ROOT, assert_one_line_error, make_repo, run_cli
from tests.support.tools import ToolMissing, tool_path

EXAMPLES = ROOT / "repo-templates" / "function-charts"


@pytest.fixture(scope="module")
def helm() -> Path:
    try:
        return tool_path("helm")
    except ToolMissing as missing:
        pytest.skip(str(missing))


def check_json(repo: Path, *extra: Any, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(["check", "--repo", repo, "-o", "json", *extra], env=env)
    assert code in (0, 2), stderr
    return code, json.loads(stdout)


def findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for cluster in report["clusters"] for f in cluster["findings"]]


# -- the examples -------------------------------------------------------------------------------------------

# (cluster, rule, template file) of every finding the examples give: the three charts done right give none,
# each broken chart exactly its own.
EXPECTED = {
    ("gpu-basic", "NVCF-F-001", "charts/grove-pcs/templates/podcliqueset.yaml"),
    ("gpu-mnnvl", "NVCF-F-002", "charts/broken-topology-on-template/templates/statefulset.yaml"),
    ("gpu-basic", "NVCF-F-003", "charts/statefulset-gang/templates/statefulset.yaml"),
    ("gpu-mnnvl", "NVCF-F-004", "charts/broken-deployment-gang/templates/deployment.yaml"),
    ("gpu-mnnvl", "NVCF-F-005", "charts/broken-statefulset-ordered/templates/statefulset.yaml"),
    ("gpu-mnnvl", "NVCF-F-006", "charts/broken-topology-name/templates/statefulset.yaml"),
    ("gpu-mnnvl", "NVCF-F-006", "charts/broken-topology-level/templates/statefulset.yaml"),
    ("gpu-mnnvl", "NVCF-F-007", "charts/broken-podgroup-queue/templates/podgroup.yaml"),
    ("gpu-mnnvl", "NVCF-F-008", "charts/broken-grove-wider-child/templates/podcliqueset.yaml"),
    ("gpu-mnnvl", "NVCF-F-009", "charts/broken-grove-min-available/templates/podcliqueset.yaml"),
    ("gpu-mnnvl", "NVCF-F-010", "charts/broken-dynamo-profile/templates/graph.yaml"),
    ("gpu-mnnvl", "NVCF-F-012", "charts/broken-pod-group-name/templates/statefulset.yaml"),
}


@pytest.fixture(scope="module")
def examples_report(helm: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.support.helpers import load_demo_builder

    repo = tmp_path_factory.mktemp("examples") / "repo"
    load_demo_builder().build_charts_repo(repo)
    code, report = check_json(repo)
    assert code == 2
    return report


def test_each_example_gives_exactly_its_findings(examples_report: dict[str, Any]) -> None:
    got = [(f["cluster"], f["rule"], f["location"]["file"]) for f in findings(examples_report)]
    assert set(got) == EXPECTED
    # one finding per mistake, but NVCF-F-002 once per misplaced annotation (two on that template)
    assert (
        sorted(got).count(("gpu-mnnvl", "NVCF-F-002", "charts/broken-topology-on-template/templates/statefulset.yaml"))
        == 2
    )
    assert len(got) == len(EXPECTED) + 1


def test_examples_point_at_the_template_line(examples_report: dict[str, Any]) -> None:
    """Every finding names a line of the chart's template file whose text is the value it is about."""
    for finding in findings(examples_report):
        location = finding["location"]
        line = (EXAMPLES / location["file"]).read_text().splitlines()[location["line"] - 1]
        last = location["path"].split(".")[-1]
        assert last in line or last in ("kind", "podManagementPolicy"), (finding["rule"], location, line)


def test_nvca_error_text_is_predicted(examples_report: dict[str, Any]) -> None:
    [refused] = [f for f in findings(examples_report) if f["rule"] == "NVCF-F-001"]
    assert 'unsupported types: ["grove.io/v1alpha1.PodCliqueSet"]' in refused["message"]
    assert "addons.groveOperator.enabled in environments/gpu-basic.yaml" in refused["message"]
    assert refused["subject"] == {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "namespace": None,
        "name": "grove-on-basic",
    }


def test_every_rule_of_the_examples_has_its_fix(examples_report: dict[str, Any]) -> None:
    assert all(f["fix"]["description"] for f in findings(examples_report))


# -- rendering --------------------------------------------------------------------------------------------------


def test_template_line_and_values_files(helm: Path, tmp_path: Path) -> None:
    repo = chart_repo(
        tmp_path,
        {"sts.yaml": TEMPLATE_STS},
        workload="    chart: charts/fn\n    values: [charts/fn/values.yaml, prod.yaml]\n",
    )
    from tests.support.helpers import commit_files

    commit_files(repo, {"prod.yaml": "replicas: 3\n"})
    _, report = check_json(repo)
    [finding] = findings(report)
    assert finding["rule"] == "NVCF-F-002"
    assert finding["location"]["file"] == "charts/fn/templates/sts.yaml"
    assert finding["location"]["line"] == 15  # the annotation's own line, though Helm filled its value in
    assert finding["subject"]["name"] == "fn-worker"


def test_a_rendered_manifest_file_is_read_without_helm(tmp_path: Path) -> None:
    manifest = (
        TEMPLATE_STS.replace("{{ .Release.Name }}", "fn")
        .replace("{{ .Values.replicas }}", "2")
        .replace("{{ .Values.topology | quote }}", "t")
    )
    files = {
        "kai-gitops.yaml": CONFIG + "    manifests: rendered/fn.yaml\n",
        "env.yaml": ENV,
        "rendered/fn.yaml": "---\n" + manifest,
    }
    repo = make_repo(tmp_path, files)[0]
    _, report = check_json(repo, env={"PATH": str(tmp_path / "no-helm-here")})
    [finding] = findings(report)
    assert (finding["location"]["file"], finding["location"]["line"]) == ("rendered/fn.yaml", 16)


def test_hooks_are_not_judged(helm: Path, tmp_path: Path) -> None:
    hook = (
        "apiVersion: grove.io/v1alpha1\nkind: PodClique\nmetadata:\n  name: x\n  annotations:\n"
        "    helm.sh/hook: pre-install\n"
    )
    code, report = check_json(chart_repo(tmp_path, {"hook.yaml": hook}))
    assert (code, findings(report)) == (0, [])


def test_no_secret_value_reaches_the_facts(helm: Path, tmp_path: Path) -> None:
    from reconciler.app.pipeline import desired_clusters, open_desired
    from reconciler.app.settings import GitSettings
    from reconciler.checks.workload_facts import workload_facts
    from reconciler.sources.function_charts import render_workloads

    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  token: s3cr3t-value-never-leaves\n"
    repo = open_desired(GitSettings(str(chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS, "secret.yaml": secret}))))
    [desired] = desired_clusters(repo, None)
    rendered = render_workloads(repo.tree, repo.config.workloads, None)
    facts = json.dumps(workload_facts(desired, list(rendered.values())))
    assert "s3cr3t" not in facts
    assert '"kind": "Secret"' in facts


# -- errors: one line each, exit 1 ------------------------------------------------------------------------------


def test_helm_missing_on_path(tmp_path: Path) -> None:
    repo = chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS})
    code, stdout, stderr = run_cli(["check", "--repo", repo], env={"PATH": str(tmp_path / "nothing")})
    assert_one_line_error(code, stdout, stderr, "helm not found on PATH", "workloads:", "pass --helm PATH")


def test_helm_flag_names_a_missing_file(tmp_path: Path) -> None:
    repo = chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS})
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--helm", tmp_path / "helm"])
    assert_one_line_error(code, stdout, stderr, f"--helm {tmp_path / 'helm'}: no such file")


def test_render_failure_names_the_chart(helm: Path, tmp_path: Path) -> None:
    repo = chart_repo(tmp_path, {"bad.yaml": "kind: {{ .Values.nope.deeper }}\n"})
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--helm", helm])
    line = assert_one_line_error(
        code, stdout, stderr, "charts/fn:", "workload 'fn': helm template failed for chart charts/fn:", "nil pointer"
    )
    assert "kai-gitops-chart-" not in line  # helm's words name the repository's chart, not the private copy


def test_a_chart_directory_without_chart_yaml(helm: Path, tmp_path: Path) -> None:
    repo = chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS}, workload="    chart: charts/missing\n")
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "charts/missing: workload 'fn': no Chart.yaml in chart directory")


def test_a_rendered_document_without_kind(helm: Path, tmp_path: Path) -> None:
    repo = chart_repo(tmp_path, {"x.yaml": "apiVersion: v1\nmetadata:\n  name: x\n"})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(
        code, stdout, stderr, "charts/fn/templates/x.yaml:1:1: a rendered object has no apiVersion or kind"
    )


def test_a_render_over_the_byte_budget(helm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.sources import function_charts

    monkeypatch.setattr(function_charts, "MAX_BYTES", 200)
    repo = chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "the render of chart charts/fn is over 200 bytes")


def test_a_cluster_without_workloads_needs_no_helm(tmp_path: Path) -> None:
    """Only the workloads of the clusters a run checks are rendered: --cluster other reads no chart."""
    other = "  - name: other\n    mode: addon\n    kaiChartVersion: v0.16.7\n    environmentFile: env.yaml\n"
    config = CONFIG.replace("workloads:\n", other + "workloads:\n") + "    chart: charts/fn\n"
    repo = make_repo(tmp_path, {"kai-gitops.yaml": config, "env.yaml": ENV, "charts/fn/Chart.yaml": CHART_YAML})[0]
    no_helm = {"PATH": str(tmp_path / "nothing")}
    assert run_cli(["check", "--repo", repo, "--cluster", "other"], env=no_helm)[0] == 0
    assert run_cli(["check", "--repo", repo, "--cluster", "gpu"], env=no_helm)[0] == 1


def test_a_hanging_helm_is_stopped_at_the_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helm (or --helm wrapper) that writes a line and then hangs with stdout open: the limit covers the
    read too, and the whole process group is killed."""
    from reconciler.sources import function_charts

    monkeypatch.setattr(function_charts, "HELM_TIMEOUT_S", 1.0)
    pid_file = tmp_path / "sleeper.pid"
    fake = tmp_path / "helm"
    fake.write_text(f"#!/bin/sh\necho 'apiVersion: v1'\nsleep 300 &\necho $! > {pid_file}\nwait\n")
    fake.chmod(0o755)
    repo = chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS})
    started = time.monotonic()
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--helm", fake])
    assert time.monotonic() - started < 30
    assert_one_line_error(
        code, stdout, stderr, "charts/fn: workload 'fn': helm template of chart charts/fn took over 1 s"
    )
    sleeper = int(pid_file.read_text())
    for _ in range(50):  # the group was killed: the wrapper's child goes too
        if not Path(f"/proc/{sleeper}").exists() or "Z" in Path(f"/proc/{sleeper}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"helm's child {sleeper} outlived the time limit")


# -- symbolic links in a chart ----------------------------------------------------------------------------------


def linked_chart(tmp_path: Path, target: str) -> Path:
    """The chart's only template is a symbolic link to `target` (relative to the link), committed as a link."""
    from tests.support.helpers import commit_files

    repo = make_repo(
        tmp_path,
        {
            "kai-gitops.yaml": CONFIG + "    chart: charts/fn\n",
            "env.yaml": ENV,
            "charts/fn/Chart.yaml": CHART_YAML,
            "common/sts.yaml": TEMPLATE_STS,
            "charts/fn/values.yaml": "replicas: 2\ntopology: t\n",
        },
    )[0]
    (repo / "charts/fn/templates").mkdir()
    (repo / "charts/fn/templates/sts.yaml").symlink_to(target)
    commit_files(repo, {}, "link the template")
    return repo


def test_a_symbolic_link_in_a_chart_at_a_ref_is_an_error_not_a_missing_file(helm: Path, tmp_path: Path) -> None:
    """Skipped, the linked template's findings would vanish; read() refuses a link the same way."""
    repo = linked_chart(tmp_path, "../../../common/sts.yaml")
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(
        code,
        stdout,
        stderr,
        "charts/fn/templates/sts.yaml: is a symbolic link at ref HEAD; links are not followed at a ref",
        "--worktree",
    )


def test_worktree_follows_a_link_inside_the_repository_and_refuses_one_leaving_it(helm: Path, tmp_path: Path) -> None:
    inside = linked_chart(tmp_path / "inside", "../../../common/sts.yaml")
    code, report = check_json(inside, "--worktree")
    assert code == 2 and "NVCF-F-002" in {f["rule"] for f in findings(report)}
    (tmp_path / "outside.yaml").write_text(TEMPLATE_STS)
    leaving = linked_chart(tmp_path / "leaving", str(tmp_path / "outside.yaml"))
    code, stdout, stderr = run_cli(["check", "--repo", leaving, "--worktree"])
    assert_one_line_error(code, stdout, stderr, "charts/fn/templates/sts.yaml: resolves outside the repository")


# -- a chart at the repository root -----------------------------------------------------------------------------


@pytest.mark.parametrize("worktree", [(), ("--worktree",)])
def test_a_chart_at_the_repository_root_is_rendered(helm: Path, tmp_path: Path, worktree: tuple[str, ...]) -> None:
    """`chart: .`: the repository is the chart (kai-gitops.yaml and env.yaml ride along, as in `helm template .`)."""
    repo = make_repo(
        tmp_path,
        {
            "kai-gitops.yaml": CONFIG + "    chart: .\n",
            "env.yaml": ENV,
            "Chart.yaml": CHART_YAML,
            "values.yaml": "replicas: 2\ntopology: t\n",
            "templates/sts.yaml": TEMPLATE_STS,
        },
    )[0]
    code, report = check_json(repo, *worktree)
    assert code == 2
    [finding] = [f for f in findings(report) if f["rule"] == "NVCF-F-002"]
    assert finding["location"]["file"] == "templates/sts.yaml"


def test_a_root_chart_without_chart_yaml_names_the_root(helm: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"kai-gitops.yaml": CONFIG + "    chart: ./\n", "env.yaml": ENV})[0]
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, ".: workload 'fn': no Chart.yaml in chart directory .")


def test_a_duplicate_key_in_a_template_is_told_at_the_templates_own_line(helm: Path, tmp_path: Path) -> None:
    """Not at `charts/fn (rendered):LINE`, a file nobody can open: the template from the render's `# Source:`."""
    twice = TEMPLATE_STS.replace("kind: StatefulSet\n", "kind: StatefulSet\nkind: StatefulSet\n", 1)
    repo = chart_repo(
        tmp_path, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n", "sts.yaml": twice}
    )
    line = assert_one_line_error(
        *run_cli(["check", "--repo", repo, "--helm", helm]),
        'charts/fn/templates/sts.yaml:3: duplicate key "kind" at lines 2 and 3',
    )
    assert "(rendered)" not in line


def test_a_value_the_templates_need_missing_is_told_at_the_template_line(helm: Path, tmp_path: Path) -> None:
    needs = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{ required "set a" .Values.a }}\n'
    repo = chart_repo(
        tmp_path, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n", "needs.yaml": needs}
    )
    assert_one_line_error(
        *run_cli(["check", "--repo", repo, "--helm", helm]),
        "kai-gitops: error: charts/fn/templates/needs.yaml:6:8: workload 'fn': helm template failed",
        "set a",
    )
