"""Every key of a values file accounted for (KAI-V-010, KAI-V-011) and the kai-config checks of the pinned chart.

Expected findings come from tests/fixtures/kai/values-to-config.md, the mapping table read from the KAI chart
templates at each tag (a ✗ or H cell: the version drops the value; ✓: it carries it), never from the tables
in reconciler/model/chart_keys.py. Every run goes through the CLI on a real repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import FIXTURES, addon_config, commit_files, make_repo, run_cli, standalone_config

TABLE = (FIXTURES / "kai" / "values-to-config.md").read_text()
COLUMNS = ("9", "10", "12a", "12b", "13", "14", "15", "16", "16.9", "17", "17.1")


def _column_versions() -> dict[str, str]:
    legend = re.search(r"Versions: (.*?)\. Sources", TABLE, re.S)
    assert legend is not None
    pairs = dict(re.findall(r"([\w.]+)=(v\d+\.\d+\.\d+)", legend[1]))
    assert tuple(pairs) == COLUMNS
    return pairs


VERSIONS = _column_versions()


def _name(column: str) -> str:
    """A cluster name for a table column ("16.9" -> "v16-9")."""
    return "v" + column.replace(".", "-")


def _mapping_rows() -> dict[str, dict[str, str]]:
    """values-key cell -> {column -> cell} of the mapping table."""
    rows = {}
    section = TABLE.split("## Values → Config mapping", 1)[1].split("## Values that never", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 14 and cells[0] not in ("values key", "---"):
            versions = cells[2:13]
            for i, cell in enumerate(versions):  # "same": as the column before it
                versions[i] = versions[i - 1] if cell == "same" else cell
            rows[cells[0]] = dict(zip(COLUMNS, versions, strict=True)) | {"default": cells[13]}
    return rows


ROWS = _mapping_rows()

# Rows of the table with a cell that drops the value, and a values snippet setting that key to something
# other than the chart default (the input is ours; whether it is dropped is the table's).
DROPPED_ROWS: dict[str, dict[str, Any]] = {
    "`global.nodeSelector`": {"global": {"nodeSelector": {"pool": "gpu"}}},
    "`global.imagePullSecrets[].name`": {"global": {"imagePullSecrets": [{"name": "regcred"}]}},
    "`podgrouper.queueLabelKey`": {"podgrouper": {"queueLabelKey": "team.example.com/queue"}},
    "`global.queueLabelKey`": {"global": {"queueLabelKey": "team.example.com/queue"}},
    "`global.nodePoolLabelKey`": {"global": {"nodePoolLabelKey": "team.example.com/pool"}},
    "`podgroupcontroller/queuecontroller/admission/nodescaleadjuster.resources`": {
        "admission": {"resources": {"requests": {"cpu": "200m"}}}
    },
    "`podgrouper.image/resources/affinity`": {"podgrouper": {"resources": {"requests": {"cpu": "200m"}}}},
    "`global.resourceReservation.{namespace,serviceAccount,appLabel}`": {
        "global": {"resourceReservation": {"namespace": "team-reservations"}}
    },
    "`binder/podgrouper/podgroupcontroller/queuecontroller/admission/scheduler.enabled`": {
        "scheduler": {"enabled": False}
    },
    "`<comp>.image.tag` → `global.tag` → chart appVersion (+`-fips` if `global.fips`)": {"global": {"tag": "v9.9.9"}},
}


def _leaf(snippet: dict[str, Any]) -> str:
    path = []
    node: Any = snippet
    while isinstance(node, dict) and len(node) == 1 and not (path and path[-1] in ("nodeSelector", "resources")):
        key = next(iter(node))
        path.append(key)
        node = node[key]
    return ".".join(path)


def _dropped(cell: str) -> bool | None:
    """True for ✗ and H cells, False for ✓, None where the chart has no such value (—)."""
    if cell.startswith("—"):
        return None
    return cell.startswith(("✗", "H"))


def _issue(row: str) -> str | None:
    found = re.search(r"KAI#(\d+)", ROWS[row]["default"])
    return f"KAI-Scheduler #{found[1]}" if found else None


def _yaml(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"  # JSON is YAML


def _check(tmp_path: Path, files: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    repo, _ = make_repo(tmp_path, files)
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json", *args])
    assert code in (0, 2), err
    return code, json.loads(out), err


def _findings(report: dict[str, Any], rule: str, cluster: str | None = None) -> list[dict[str, Any]]:
    return [
        f for c in report["clusters"] if cluster in (None, c["cluster"]) for f in c["findings"] if f["rule"] == rule
    ]


def _fleet(values_by_cluster: dict[str, dict[str, Any]], versions: dict[str, str]) -> dict[str, str]:
    config = "apiVersion: kai-gitops/v1\nclusters:\n"
    files = {}
    for name, values in values_by_cluster.items():
        config += (
            f"  - name: {name}\n    mode: standalone\n    kaiChartVersion: {versions[name]}\n"
            f"    kaiValuesFile: {name}.yaml\n"
        )
        files[f"{name}.yaml"] = _yaml(values)
    return {"kai-gitops.yaml": config, **files}


# -- KAI-V-010: values the pinned version drops, from the mapping table ----------------------------------


def test_the_table_names_every_row_this_test_sets() -> None:
    assert set(DROPPED_ROWS) <= set(ROWS), set(DROPPED_ROWS) - set(ROWS)


@pytest.mark.parametrize("row", sorted(DROPPED_ROWS))
def test_a_value_is_reported_exactly_where_the_table_says_the_version_drops_it(tmp_path: Path, row: str) -> None:
    cells = ROWS[row]
    columns = [c for c in COLUMNS if _dropped(cells[c]) is not None]
    clusters = {_name(c): DROPPED_ROWS[row] for c in columns}
    versions = {_name(c): VERSIONS[c] for c in columns}
    _, report, _ = _check(tmp_path, _fleet(clusters, versions))
    path = _leaf(DROPPED_ROWS[row])
    for column in columns:
        hits = [f for f in _findings(report, "KAI-V-010", _name(column)) if f["location"]["path"] == path]
        expected = _dropped(cells[column])
        assert bool(hits) is expected, (row, VERSIONS[column], cells[column], hits)
        if expected:
            [hit] = hits
            assert hit["message"].startswith(f"{path} is ignored by KAI chart {VERSIONS[column]}")
            issue = _issue(row)
            assert issue is None or issue in hit["message"], hit["message"]
            assert hit["location"]["line"] == 1 + len(path.split(".")) and hit["severity"] == "warning"
        unknown = [f for f in _findings(report, "KAI-V-011", _name(column)) if f["location"]["path"].startswith(path)]
        assert not unknown, unknown  # a dropped value is not also called unknown


def test_per_component_replicas_never_reach_the_config(tmp_path: Path) -> None:
    never = [line for line in TABLE.splitlines() if line.startswith("| `<component>.replicas`")]
    assert never and "nothing" in never[0] and "KAI#1124" in never[0]
    clusters = {_name(c): {"scheduler": {"replicas": 2}} for c in COLUMNS}
    _, report, _ = _check(tmp_path, _fleet(clusters, {_name(c): VERSIONS[c] for c in COLUMNS}))
    for column in COLUMNS:
        [hit] = _findings(report, "KAI-V-010", _name(column))
        assert hit["location"]["path"] == "scheduler.replicas" and "KAI-Scheduler #1124" in hit["message"]


def test_the_default_value_of_a_dropped_key_changes_nothing_and_is_not_reported(tmp_path: Path) -> None:
    default = ROWS["`podgrouper.queueLabelKey`"]["default"].split("`")[1]
    files = {
        "kai-gitops.yaml": standalone_config(version=VERSIONS["14"]),
        "kai-values.yaml": _yaml({"podgrouper": {"queueLabelKey": default}}),
    }
    _, report, _ = _check(tmp_path, files)
    assert _findings(report, "KAI-V-010") == []


def test_v010_names_the_version_that_carries_the_value(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.14.7"),
        "kai-values.yaml": "podgrouper:\n  queueLabelKey: team.example.com/queue\n",
    }
    code, report, _ = _check(tmp_path, files)
    [hit] = _findings(report, "KAI-V-010")
    carried = [c for c in COLUMNS if not _dropped(ROWS["`podgrouper.queueLabelKey`"][c])]
    assert carried == ["16", "16.9", "17", "17.1"]
    assert "carried from v0.16.0" in hit["message"] and code == 2
    assert (hit["location"]["line"], hit["location"]["column"]) == (2, 3)


# -- KAI-V-011: unknown keys, at their own line and column -------------------------------------------------


LAB_VALUES = """\
scheduler:
  placementStratgy: binpack
defaultQueues:
  createDefaultQueue: true
global:
  nodeSelector:
    anything.example.com/goes: "here"
  tolerations:
    - key: gpu
      operator: Exists
"""


def test_typos_in_a_values_file_are_named_at_their_line_with_a_suggestion(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.16.8"), "kai-values.yaml": LAB_VALUES}
    code, report, _ = _check(tmp_path, files)
    found = {
        (f["location"]["path"], f["location"]["line"], f["location"]["column"]): f["message"]
        for f in _findings(report, "KAI-V-011")
    }
    assert set(found) == {("scheduler.placementStratgy", 2, 3), ("defaultQueues", 3, 1)}, found
    assert found[("scheduler.placementStratgy", 2, 3)].endswith("did you mean placementStrategy?")
    assert found[("defaultQueues", 3, 1)] == (
        "unknown key defaultQueues — KAI chart v0.16.8 has no such value, so "
        "Helm ignores it; did you mean defaultQueue?"
    )
    assert code == 2


def test_an_unknown_secret_named_key_keeps_the_words_after_it(tmp_path: Path) -> None:
    """`global.password: x` read "unknown key global.password: <redacted> chart v0.14.7 …": the free-text
    redaction took `password: KAI` for a secret pair. The token written there is still never shown."""
    token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.14.7"),
        "kai-values.yaml": f"global:\n  password: x\n  apiToken: {token}\n",
    }
    _, report, _ = _check(tmp_path, files)
    messages = {f["location"]["path"]: f["message"] for f in _findings(report, "KAI-V-011")}
    assert messages["global.password"].startswith("unknown key global.password — KAI chart v0.14.7 has no such value")
    assert "<redacted>" not in messages["global.password"]
    assert token not in json.dumps(report)


def _shard_keys_not_rendered() -> set[str]:
    """Modelled versions whose chart drops scheduler.plugins/actions (rendered into the shard from v0.12.14)."""
    found = re.search(
        r"`scheduler.plugins`/`actions` in values with a chart version before v(\d+)\.(\d+)\.(\d+)", TABLE
    )
    assert found is not None
    first = tuple(int(n) for n in found.groups())
    return {v for v in VERSIONS.values() if tuple(int(n) for n in v[1:].split(".")) < first}


def test_a_clean_values_file_has_no_unknown_keys(tmp_path: Path) -> None:
    guide = (FIXTURES / "nvcf" / "standalone-kai-values.yaml").read_text()
    dropped_shard_keys = _shard_keys_not_rendered()
    assert dropped_shard_keys == {"v0.9.20", "v0.10.5", "v0.12.13"}
    for version in VERSIONS.values():
        if version == "v0.9.20":
            continue  # no defaultQueue values before v0.10
        files = {"kai-gitops.yaml": standalone_config(version=version), "kai-values.yaml": guide}
        _, report, _ = _check(tmp_path / version, files)
        assert _findings(report, "KAI-V-011") == [], version
        ignored = {f["location"]["path"] for f in _findings(report, "KAI-V-010")}
        assert ignored == ({"scheduler.plugins", "scheduler.actions"} if version in dropped_shard_keys else set())


def test_a_value_of_a_newer_chart_says_which_chart_has_it(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.16.9"), "kai-values.yaml": "kaiConfig:\n  render: true\n"}
    _, report, _ = _check(tmp_path, files)
    [hit] = _findings(report, "KAI-V-011")
    # kai-resource-management PR #68: "The key does not exist in v0.16.9"
    assert hit["message"] == (
        "unknown key kaiConfig — KAI chart v0.16.9 has no such value, so Helm ignores it "
        "(charts v0.17.0, v0.17.1 have it)"
    )
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.9.20"),
        "kai-values.yaml": "defaultQueue:\n  createDefaultQueue: true\n",
    }
    _, report, _ = _check(tmp_path / "v09", files)
    [hit] = _findings(report, "KAI-V-011")
    assert hit["message"].endswith("(charts v0.10.5, v0.12.13 and 8 more have it)")


def test_addon_typo_is_named_and_the_disabled_addon_is_an_error(tmp_path: Path) -> None:
    env = "addons:\n  kaiSchedular:\n    enabled: true\n"
    files = {"kai-gitops.yaml": addon_config(), "env.yaml": env}
    code, report, _ = _check(tmp_path, files)
    [typo] = _findings(report, "KAI-V-011")
    assert (typo["location"]["path"], typo["location"]["line"], typo["location"]["column"]) == (
        "addons.kaiSchedular",
        2,
        3,
    )
    assert typo["message"].endswith("did you mean kaiScheduler?")
    [off] = _findings(report, "KAI-M-005")
    assert off["severity"] == "error" and code == 2


def test_addon_keys_the_stack_does_not_forward_are_ignored(tmp_path: Path) -> None:
    section = TABLE.split("## Add-on mode", 1)[1]
    assert "reads **only** `enabled` and `<component>.resources.{requests,limits}.{cpu,memory}`" in section
    env = (
        "addons:\n  kaiScheduler:\n    enabled: true\n    scheduler:\n      placementStrategy: spread\n"
        "      resources:\n        requests:\n          cpu: 500m\n          gpu: 1\n"
    )
    files = {"kai-gitops.yaml": addon_config(), "env.yaml": env}
    _, report, _ = _check(tmp_path, files)
    ignored = {f["location"]["path"] for f in _findings(report, "KAI-V-010")}
    assert ignored == {
        "addons.kaiScheduler.scheduler.placementStrategy",
        "addons.kaiScheduler.scheduler.resources.requests.gpu",
    }
    assert _findings(report, "KAI-V-011") == [] and _findings(report, "KAI-M-005") == []


def test_an_operator_environment_file_has_no_unknown_keys(tmp_path: Path) -> None:
    env = (FIXTURES / "nvcf" / "compute-plane-environment-local.yaml").read_text()
    files = {"kai-gitops.yaml": addon_config(), "env.yaml": env}
    _, report, _ = _check(tmp_path, files)
    assert _findings(report, "KAI-V-011") == [] and _findings(report, "KAI-V-010") == []


def test_keys_of_a_vendored_stack_base_are_known(tmp_path: Path) -> None:
    base = (FIXTURES / "nvcf" / "compute-plane-environment-base.yaml").read_text() + "newStackSetting:\n  level: 1\n"
    env = "addons:\n  kaiScheduler:\n    enabled: true\nnewStackSetting:\n  level: 2\n  extra: 3\n"
    files = {
        "kai-gitops.yaml": addon_config(extra="    stackBaseFile: base.yaml\n"),
        "env.yaml": env,
        "base.yaml": base,
    }
    _, report, _ = _check(tmp_path, files)
    assert [f["location"]["path"] for f in _findings(report, "KAI-V-011")] == ["newStackSetting.extra"]


# -- --fix-git respells a key when exactly one known key is close --------------------------------------------


def test_fix_git_respells_the_typos_and_keeps_their_values(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.16.8"),
        "kai-values.yaml": "scheduler:\n  placementStratgy: spread  # ours\n",
    }
    repo, _ = make_repo(tmp_path, files)
    code, _, err = run_cli(["check", "--repo", repo, "--fix-git-dry-run"])
    assert code == 2
    assert "-  placementStratgy: spread  # ours\n+  placementStrategy: spread  # ours" in err
    assert "placementStrategy: binpack" not in err  # the canonical value does not overwrite the user's


def test_a_respelling_is_offered_for_a_close_key_only(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.16.8"),
        "kai-values.yaml": "global:\n  tags: v1\n",
    }  # one edit from "tag" only
    _, report, _ = _check(tmp_path, files)
    [hit] = _findings(report, "KAI-V-011")
    assert [e["value"] for e in hit["fix"]["git_edits"]] == ["tag"]
    files["kai-values.yaml"] = "admission:\n  cdiX: true\n"  # cdi (1 edit) only
    _, report, _ = _check(tmp_path / "b", files)
    [hit] = _findings(report, "KAI-V-011")
    assert [e["value"] for e in hit["fix"]["git_edits"]] == ["cdi"]
    files["kai-values.yaml"] = "binder:\n  nmae: x\n"  # name (one swap) only
    _, report, _ = _check(tmp_path / "c", files)
    [hit] = _findings(report, "KAI-V-011")
    assert hit["fix"]["git_edits"][0] == {
        "file": "kai-values.yaml",
        "doc": 0,
        "path": ["binder", "nmae"],
        "op": "rename",
        "value": "name",
    }
    files["kai-values.yaml"] = "scheduler:\n  gpu: x\n"  # three letters: no guess
    _, report, _ = _check(tmp_path / "d", files)
    [hit] = _findings(report, "KAI-V-011")
    assert hit["fix"]["git_edits"] == [] and "did you mean" not in hit["message"]


def test_two_equally_close_keys_give_a_question_and_no_rename() -> None:
    from reconciler.checks.values_keys import suggestions

    assert suggestions("metricPort", ["metricsPort", "metricPorts", "probePort"]) == ["metricPorts", "metricsPort"]
    assert suggestions("Tag", ["tag", "fips"]) == ["tag"]  # case alone counts as close


# -- the kai-config lifecycle of the pinned chart ------------------------------------------------------------


def _eras() -> dict[str, str]:
    line = re.search(r"Modelled chart versions and the era each belongs to:\n(.*?)\. Eras", TABLE, re.S)
    assert line is not None
    return dict(re.findall(r"`(v[\d.]+)`=(E\w+)", line[1]))


@pytest.mark.parametrize(("version", "era"), sorted(_eras().items()))
def test_hook_era_versions_warn_and_deployer_eras_do_not(tmp_path: Path, version: str, era: str) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version=version),
        "kai-values.yaml": (FIXTURES / "nvcf" / "standalone-kai-values.yaml").read_text(),
    }
    _, report, _ = _check(tmp_path, files)
    hits = _findings(report, "KAI-R-003")
    assert bool(hits) is era.startswith("E1"), (version, era, hits)
    if hits:
        assert "KAI-Scheduler #1536" in hits[0]["message"]


def test_a_version_outside_the_era_table_is_named(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.20.1"), "kai-values.yaml": "{}\n"}
    _, report, _ = _check(tmp_path, files)
    [hit] = _findings(report, "KAI-R-003")
    assert hit["message"].startswith("kai-gitops does not know how KAI chart v0.20.1 produces kai-config")


def test_render_with_the_deployer_on_is_an_error_only_where_render_exists(tmp_path: Path) -> None:
    e3 = [v for v, e in _eras().items() if e == "E3"]
    assert e3 == ["v0.17.0"]
    files = {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": "kaiConfig:\n  render: true\n"}
    _, report, _ = _check(tmp_path, files)
    [hit] = _findings(report, "KAI-V-012")
    assert "mutually exclusive" in hit["message"] and hit["location"]["path"] == "kaiConfig.render"
    files["kai-values.yaml"] = "kaiConfig:\n  render: true\nkaiConfigDeployer:\n  enabled: false\n"
    _, report, _ = _check(tmp_path / "off", files)
    assert _findings(report, "KAI-V-012") == []


MANIFESTS = """\
apiVersion: kai.scheduler/v1
kind: SchedulingShard
metadata:
  name: gpu
---
apiVersion: kai.scheduler/v1
kind: Config
metadata:
  name: {config}
"""


def test_no_shard_is_an_error_unless_one_is_kept_in_git(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.16.8"),
        "kai-values.yaml": "defaultShard:\n  enabled: false\n",
    }
    repo, _ = make_repo(tmp_path, files)
    code, out, _ = run_cli(["check", "--repo", repo, "-o", "json"])
    [hit] = _findings(json.loads(out), "KAI-V-013")
    assert code == 2 and hit["severity"] == "error" and (hit["location"]["line"], hit["location"]["column"]) == (2, 3)
    extra = "    kaiManifestFiles:\n      - kai-objects.yaml\n"
    commit_files(
        repo,
        {
            "kai-gitops.yaml": standalone_config(version="v0.16.8", extra=extra),
            "kai-objects.yaml": MANIFESTS.format(config="kai-config"),
        },
    )
    _, out, _ = run_cli(["check", "--repo", repo, "-o", "json"])
    assert _findings(json.loads(out), "KAI-V-013") == [] and _findings(json.loads(out), "KAI-V-014") == []


def test_a_config_not_named_kai_config_is_ignored_by_the_operator(tmp_path: Path) -> None:
    extra = "    kaiManifestFiles:\n      - kai-objects.yaml\n"
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.17.0", extra=extra),
        "kai-values.yaml": "{}\n",
        "kai-objects.yaml": MANIFESTS.format(config="lab-config"),
    }
    _, report, _ = _check(tmp_path, files)
    [hit] = _findings(report, "KAI-V-014")
    assert (hit["location"]["file"], hit["location"]["line"], hit["location"]["path"]) == (
        "kai-objects.yaml",
        9,
        "metadata.name",
    )


def test_a_manifest_file_with_another_kind_is_a_one_line_error(tmp_path: Path) -> None:
    extra = "    kaiManifestFiles:\n      - kai-objects.yaml\n"
    files = {
        "kai-gitops.yaml": standalone_config(extra=extra),
        "kai-values.yaml": "{}\n",
        "kai-objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    }
    repo, _ = make_repo(tmp_path, files)
    code, _out, err = run_cli(["check", "--repo", repo])
    assert code == 1 and "kai-objects.yaml:2" in err and "only kai.scheduler/v1 Config and SchedulingShard" in err
    assert "Traceback" not in err


def test_a_kai_manifest_name_kubernetes_would_refuse_is_a_one_line_error(tmp_path: Path) -> None:
    extra = "    kaiManifestFiles:\n      - kai-objects.yaml\n"
    files = {
        "kai-gitops.yaml": standalone_config(extra=extra),
        "kai-values.yaml": "{}\n",
        "kai-objects.yaml": MANIFESTS.format(config="Kai_Config"),
    }
    repo, _ = make_repo(tmp_path, files)
    code, _out, err = run_cli(["check", "--repo", repo])
    assert code == 1 and "kai-objects.yaml:9" in err and "'Kai_Config'" in err and "Kubernetes would refuse" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("pin", "named"),
    [
        ("v0.16.7", "chart v0.16.7 defaults (as in v0.16.9, the nearest chart kai-gitops models)"),
        ("v0.16.8", "chart v0.16.8 defaults"),
    ],
)
def test_inherited_values_name_the_pinned_chart_and_the_one_that_stands_in(
    tmp_path: Path, pin: str, named: str
) -> None:
    """A user pinned v0.16.7: naming only v0.16.9 (whose values kai-gitops ships) read as a wrong version."""
    files = {"kai-gitops.yaml": standalone_config(version=pin), "kai-values.yaml": "{}\n"}
    _, report, _ = _check(tmp_path, files)
    [written_out] = _findings(report, "KAI-V-004")
    assert f"rely on {named}:" in written_out["message"], written_out["message"]
