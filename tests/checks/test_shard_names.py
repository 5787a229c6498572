"""Shard plugin and action names checked against the pinned KAI version (KAI-V-023).

The names each version knows are read here from the KAI Go source the release tool reads
(tests/fixtures/kai/release-v0.17.1/, the `v0.17` branch), never from the model's data: a check that
passes because the model and the test share a mistake is no check. Every run goes through the CLI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reconciler.findings.finding import EditOp, GitEdit
from reconciler.gitfix.yaml_splice import apply_edits
from tests.support.helpers import FIXTURES, addon_config, make_repo, run_cli, standalone_config

SOURCE = FIXTURES / "kai" / "release-v0.17.1" / "pkg" / "apis" / "kai" / "v1" / "schedulingshard_types.go"
_GO = SOURCE.read_text()
# The defaults named in the field comment of SchedulingShardSpec.Plugins, which upstream keeps by hand beside
# the table: a second reading of the same source.
DEFAULT_PLUGINS_V0_17_1 = set(
    re.findall(r"^\s+\"([a-z-]+)\":\s+\d+,", _GO.split("var defaultPluginPriorities")[1].split("}")[0], re.M)
)
SHARD = """\
apiVersion: kai.scheduler/v1
kind: SchedulingShard
metadata:
  name: {name}
spec:
  partitionLabelValue: {name}
  plugins:
    nodeplacement:
      arguments: {{gpu: spread}}
    {plugin}:
      enabled: false
  actions:
    {action}:
      enabled: false
"""


def _check(tmp_path: Path, files: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    repo, _ = make_repo(tmp_path, files)
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])
    assert code in (0, 2), err
    report = json.loads(out)
    return code, [f for c in report["clusters"] for f in c["findings"] if f["rule"] == "KAI-V-023"]


def _values(plugins: str = "", actions: str = "") -> str:
    text = "scheduler:\n"
    if plugins:
        text += f"  plugins:\n    {plugins}:\n      priority: 150\n"
    if actions:
        text += f"  actions:\n    {actions}:\n      enabled: false\n"
    return text


def test_the_fixture_reads_the_twenty_two_defaults_of_v0_17() -> None:
    comment = _GO.split("Default plugins and their priorities")[1].split("+kubebuilder")[0]
    named = set(re.findall(r"([a-z][a-z-]+)=\d+", comment)) | {"gpupack"}  # "gpupack/gpuspread=300"
    assert named == DEFAULT_PLUGINS_V0_17_1 and len(named) == 22


def test_every_default_plugin_of_the_pinned_version_passes(tmp_path: Path) -> None:
    plugins = "".join(f"    {name}:\n      priority: 10\n" for name in sorted(DEFAULT_PLUGINS_V0_17_1))
    values = (
        "scheduler:\n  plugins:\n"
        + plugins
        + "  actions:\n"
        + "".join(
            f"    {a}:\n      enabled: true\n"
            for a in ("allocate", "consolidation", "reclaim", "preempt", "stalegangeviction")
        )
    )
    _, hits = _check(tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.17.1"), "kai-values.yaml": values})
    assert hits == []


def test_a_misspelt_plugin_in_the_values_is_an_error_at_its_line(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.17.1"), "kai-values.yaml": _values("nodeplacment")}
    code, [hit] = _check(tmp_path, files)
    assert code == 2 and hit["severity"] == "error"
    assert (hit["location"]["file"], hit["location"]["line"], hit["location"]["column"]) == ("kai-values.yaml", 3, 5)
    assert hit["message"].startswith('shard plugin "nodeplacment" is not a plugin of KAI v0.17.1: ')
    assert hit["message"].endswith("; did you mean nodeplacement?")
    [edit] = hit["fix"]["git_edits"]
    assert (edit["op"], edit["path"], edit["value"]) == (
        "rename",
        ["scheduler", "plugins", "nodeplacment"],
        "nodeplacement",
    )


def test_a_misspelt_action_is_an_error_naming_what_the_scheduler_does(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.16.9"),
        "kai-values.yaml": _values(actions="consolidaton"),
    }
    _, [hit] = _check(tmp_path, files)
    assert hit["message"].startswith('shard action "consolidaton" is not an action of KAI v0.16.9: ')
    assert "refuses a configuration" in hit["message"] and "did you mean consolidation?" in hit["message"]


def test_a_name_far_from_every_known_one_gets_no_suggestion(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.17.1"), "kai-values.yaml": _values("mycustomplugin")}
    _, [hit] = _check(tmp_path, files)
    assert "did you mean" not in hit["message"]
    assert "customSchedulerPlugins" in hit["fix"]["description"]


def test_a_custom_plugin_listed_in_kai_gitops_yaml_passes(tmp_path: Path) -> None:
    extra = "    customSchedulerPlugins: [mycustomplugin]\n    customSchedulerActions: [myaction]\n"
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.17.1", extra=extra),
        "kai-values.yaml": _values("mycustomplugin", "myaction"),
    }
    assert _check(tmp_path, files)[1] == []


def test_a_custom_list_of_the_wrong_kind_does_not_allow_it(tmp_path: Path) -> None:
    extra = "    customSchedulerActions: [mycustomplugin]\n"
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.17.1", extra=extra),
        "kai-values.yaml": _values("mycustomplugin"),
    }
    assert len(_check(tmp_path, files)[1]) == 1


@pytest.mark.parametrize(
    ("version", "plugin", "known"),
    [
        ("v0.15.3", "sg-multinodegang", False),  # the scenario generators are defaults from v0.16
        ("v0.16.8", "sg-multinodegang", True),
        ("v0.15.3", "numa", False),  # built in (off by default) from v0.16
        ("v0.16.9", "numa", True),
        ("v0.17.1", "backgroundpods", False),  # a default only on main after v0.17.1 (kai-scheduler/api, 2026-10)
    ],
)
def test_what_a_version_knows_differs_by_version(tmp_path: Path, version: str, plugin: str, known: bool) -> None:
    files = {"kai-gitops.yaml": standalone_config(version=version), "kai-values.yaml": _values(plugin)}
    hits = _check(tmp_path, files)[1]
    assert (hits == []) is known, hits
    if plugin == "sg-multinodegang" and not known:
        assert "(v0.16.8, v0.16.9, v0.17.0, v0.17.1 have it)" in hits[0]["message"]


def test_a_schedulingshard_kept_in_git_is_checked_at_its_own_line(tmp_path: Path) -> None:
    extra = "    kaiManifestFiles:\n      - shards.yaml\n"
    shard = SHARD.format(name="cpu", plugin="elastc", action="reclaim")
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.17.1", extra=extra),
        "kai-values.yaml": "{}\n",
        "shards.yaml": "---\n" + SHARD.format(name="gpu", plugin="elastic", action="preemt") + "---\n" + shard,
    }
    _, hits = _check(tmp_path, files)
    by_name = {h["location"]["path"].rsplit(".", 1)[1]: h for h in hits}
    assert set(by_name) == {"preemt", "elastc"}
    assert by_name["preemt"]["location"]["line"] == 14
    assert (by_name["preemt"]["subject"]["kind"], by_name["preemt"]["subject"]["name"]) == ("SchedulingShard", "gpu")
    assert by_name["elastc"]["location"]["line"] == 16 + 10 and by_name["elastc"]["subject"]["name"] == "cpu"
    [edit] = by_name["elastc"]["fix"]["git_edits"]
    assert edit["doc"] == 1 and edit["value"] == "elastic"


def test_an_addon_clusters_shard_is_judged_by_the_stacks_kai(tmp_path: Path) -> None:
    extra = "    stackKaiVersion: v0.15.3\n    kaiManifestFiles:\n      - shards.yaml\n"
    env = "addons:\n  kaiScheduler:\n    enabled: true\n"
    files = {
        "kai-gitops.yaml": addon_config(extra=extra),
        "env.yaml": env,
        "shards.yaml": SHARD.format(name="gpu", plugin="numa", action="reclaim"),
    }
    [hit] = _check(tmp_path, files)[1]
    assert hit["message"].startswith('shard plugin "numa" is not a plugin of KAI v0.15.3 (v0.16.8, ')


def test_a_pin_without_its_own_model_names_the_stand_in(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.16.7"), "kai-values.yaml": _values("gpupak")}
    [hit] = _check(tmp_path, files)[1]
    assert hit["message"].startswith('shard plugin "gpupak" is not a plugin of KAI v0.16.7 (modelled by v0.16.9): ')


def test_the_rename_fix_applied_to_the_file_clears_the_finding(tmp_path: Path) -> None:
    extra = "    kaiManifestFiles:\n      - shards.yaml\n"
    text = (
        SHARD.format(name="gpu", plugin="elastic", action="reclaim")
        + "---\n"
        + SHARD.format(name="cpu", plugin="elastc", action="reclaim")
    )
    config = standalone_config(version="v0.17.1", extra=extra)
    files = {"kai-gitops.yaml": config, "kai-values.yaml": "{}\n", "shards.yaml": text}
    [hit] = _check(tmp_path / "before", files)[1]
    edits = [
        GitEdit(e["file"], tuple(e["path"]), e["value"], EditOp(e["op"]), e["doc"]) for e in hit["fix"]["git_edits"]
    ]
    fixed = apply_edits(text.encode(), "shards.yaml", edits).decode()
    assert fixed == text.replace("elastc:", "elastic:")
    assert _check(tmp_path / "after", {**files, "shards.yaml": fixed})[1] == []
