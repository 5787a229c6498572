"""deploy/helmfile: the kai-gitops release of an nvcf-compute-plane style Helmfile stack.

helmfile itself is not among the built tools (its Go module graph -- vals with the cloud providers' SDKs,
go-getter -- is several times helm's, not worth building on every tools refresh for one example), so the
helmfile is read as YAML: the release is switched by the environment value, `needs:` the KAI release defined in
the same file, its chart path exists, and the environment's values -- passed through by the one-line values
template -- are accepted by the chart's strict schema (the real `helm template`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.deploy_manifests import main_container
from tests.support.helpers import ROOT
from tests.support.tools import require_tool

HELMFILE_DIR = ROOT / "deploy" / "helmfile"
HELMFILE = HELMFILE_DIR / "helmfile.yaml"
PASS_THROUGH = '{{ dig "kaiGitops" "values" dict .Values.addons | toYaml }}\n'


def releases() -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in yaml.safe_load(HELMFILE.read_text())["releases"]}


def environment() -> dict[str, Any]:
    (values_file,) = yaml.safe_load(HELMFILE.read_text())["environments"]["default"]["values"]
    return yaml.safe_load((HELMFILE_DIR / values_file).read_text())


def test_the_release_is_switched_by_the_environment_and_needs_the_kai_release() -> None:
    kai, gitops = releases()["kai-scheduler"], releases()["kai-gitops"]
    assert gitops["condition"] == "addons.kaiGitops.enabled"
    assert gitops["needs"] == [f"{kai['namespace']}/{kai['name']}"] == ["kai-scheduler/kai-scheduler"]
    assert kai["condition"] == "addons.kaiScheduler.enabled"
    assert environment()["addons"]["kaiGitops"]["enabled"] is True
    assert environment()["addons"]["kaiScheduler"]["enabled"] is True
    assert ((HELMFILE_DIR / gitops["chart"]) / "Chart.yaml").is_file()
    assert yaml.safe_load(((HELMFILE_DIR / gitops["chart"]) / "Chart.yaml").read_text())["name"] == "kai-gitops"


def test_the_environment_values_reach_the_chart_and_pass_its_schema(tmp_path: Path) -> None:
    (values_template,) = releases()["kai-gitops"]["values"]
    assert (HELMFILE_DIR / values_template).read_text() == PASS_THROUGH  # what the next lines stand in for
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(environment()["addons"]["kaiGitops"]["values"]))
    chart = HELMFILE_DIR / releases()["kai-gitops"]["chart"]
    done = subprocess.run(
        [
            str(require_tool("helm")),
            "template",
            "kai-gitops",
            str(chart),
            "--namespace",
            releases()["kai-gitops"]["namespace"],
            "-f",
            str(values),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    objects = [o for o in yaml.safe_load_all(done.stdout) if o]
    assert any(a.startswith("--metrics-push=") for a in main_container(objects)["args"])


def test_the_deployment_page_shows_the_release() -> None:
    page = (ROOT / "docs" / "deployment.md").read_text()
    assert "deploy/helmfile/helmfile.yaml" in page and "addons.kaiGitops.enabled" in page
    assert "needs:" in page
