"""`kai-gitops upgrade-plan` (checks/upgrade_plan.py, outputs/upgrade_plan_views.py) and KAI-V-018 in the PR check.

Expected values are read from the shipped chart-values files and the upstream fixtures, never from the
plan's own tables: a default that changes is one the two values.yaml files disagree on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from reconciler.app.pipeline import desired_clusters, open_desired
from reconciler.app.settings import GitSettings
from reconciler.checks.upgrade_plan import Section, build_upgrade_plan, target_versions
from reconciler.model.crd_schemas import ServedKind, crd_version_for, validator
from reconciler.model.kai_config import column_fields
from reconciler.model.values import shipped_chart_versions
from tests.support.helpers import FIXTURES, load_demo_builder, make_repo, run_cli, standalone_config


def _plan(tmp_path: Path, pin: str, values: str, target: str, *args: str) -> tuple[int, str, str]:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(version=pin), "kai-values.yaml": values})
    return run_cli(["upgrade-plan", "--repo", repo, "--to", target, *args])


def _json(tmp_path: Path, pin: str, values: str, target: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _plan(tmp_path, pin, values, target, "-o", "json")
    assert code in (0, 2), err
    plan: dict[str, Any] = json.loads(out)
    return code, plan


def test_the_targets_are_the_shipped_chart_versions() -> None:
    assert target_versions() == shipped_chart_versions()
    assert "v0.17.0" in target_versions()


def test_an_unknown_target_is_one_line_naming_the_modelled_versions(tmp_path: Path) -> None:
    code, out, err = _plan(tmp_path, "v0.16.8", "{}\n", "v9.9.9")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "v9.9.9 is not a modelled version" in err and "v0.17.0" in err and "v0.16.8" in err


def test_the_same_release_is_nothing_to_change(tmp_path: Path) -> None:
    code, out, _ = _plan(tmp_path, "v0.17.0", "{}\n", "v0.17.0")
    assert code == 0 and "Nothing to change" in out


def test_a_removed_key_must_change_first_and_exits_2(tmp_path: Path) -> None:
    code, plan = _json(tmp_path, "v0.16.8", "admission:\n  certSecretName: my-tls\n", "v0.17.0")
    assert code == 2 and plan["changesNeeded"] is True
    [item] = [i for i in plan["items"] if i["section"] == "keys"]
    assert item["subject"] == "admission.certSecretName" and item["mustChange"] is True
    assert item["location"] == {"file": "kai-values.yaml", "line": 2, "column": 3}
    assert "#1791" in item["source"] and "removed in v0.17.0" in item["text"]
    first = plan["steps"][0]["text"]
    assert first.startswith("In Git first") and "admission.certSecretName" in first


def test_a_deprecated_key_crossing_its_release_is_named(tmp_path: Path) -> None:
    code, plan = _json(tmp_path, "v0.15.3", "admission:\n  gpuPodRuntimeClassName: nvidia\n", "v0.16.8")
    assert code == 2
    [item] = [i for i in plan["items"] if i["section"] == "keys"]
    assert "deprecated from v0.16.0 in favour of admission.gpuFractionRuntimeClassName" in item["text"]
    assert "GPU-fraction pods only" in item["text"] and "#1636" in item["source"]


def test_a_key_the_target_starts_reading_takes_effect(tmp_path: Path) -> None:
    code, plan = _json(tmp_path, "v0.16.8", "kaiConfig:\n  render: false\n", "v0.17.0")
    [item] = [i for i in plan["items"] if i["section"] == "keys"]
    assert item["subject"] == "kaiConfig" and "takes effect" in item["text"] and item["mustChange"] is False
    assert code == 0


def test_every_changed_default_is_one_the_two_values_files_disagree_on(tmp_path: Path) -> None:
    code, plan = _json(tmp_path, "v0.16.8", "scheduler:\n  goMemLimitRatio: 0.5\n", "v0.17.0")
    assert code == 0
    old, new = (
        _flat(YAML(typ="safe").load((FIXTURES / "kai" / "chart-values" / f"{v}.yaml").read_text()))
        for v in ("v0.16.8", "v0.17.0")
    )
    differ = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    shown = {i["subject"] for i in plan["items"] if i["section"] == "defaults"}
    assert shown == differ - {"scheduler.goMemLimitRatio"}  # a value the cluster sets keeps its own
    assert {"admission.certSecretName", "kaiConfig.render", "global.priorityClassName"} <= shown


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for key, value in data.items():
            out |= _flat(value, f"{prefix}.{key}" if prefix else key)
        return out
    return {prefix: data}


def test_the_config_fields_and_crd_changes_are_sourced(tmp_path: Path) -> None:
    _, plan = _json(tmp_path, "v0.16.8", "{}\n", "v0.17.0")
    config = {i["subject"] for i in plan["items"] if i["section"] == "config"}
    assert "spec.global.priorityClassName" in config and "spec.podGrouper.args.genericKartaFallback" in config
    crds = [i for i in plan["items"] if i["section"] == "crds"]
    crd_fields = " ".join(i["subject"] for i in crds)
    assert "spec.goMemLimit" in crd_fields and "spec.levels[].alias" in crd_fields
    assert "spec.minMember" not in crd_fields  # relaxed to 0 only on the v0.17 branch (v0.17.1)
    assert all(i["source"] for i in plan["items"]) and all(s["source"] for s in plan["steps"])
    [reminder] = [i for i in plan["items"] if i["section"] == "reminders"]
    assert "only on helm install" in reminder["text"]


def test_the_crd_table_agrees_with_the_v0_17_0_crds() -> None:
    """The fields the table says v0.17.0 added are in the v0.17.0 CRDs copied into the fixtures."""
    configs = (FIXTURES / "kai" / "kai.scheduler_configs.yaml").read_text()
    shards = (FIXTURES / "kai" / "kai.scheduler_schedulingshards.yaml").read_text()
    podgroups = (FIXTURES / "kai" / "scheduling.run.ai_podgroups.yaml").read_text()
    assert "priorityClassName:" in configs and "genericKartaFallback:" in configs
    assert "goMemLimitRatio:" in shards and "preemptionDelay:" in podgroups and "stalenessGracePeriod:" in podgroups


def test_an_upcoming_change_is_named_for_a_value_it_touches(tmp_path: Path) -> None:
    _, plan = _json(tmp_path, "v0.16.8", "crdupgrader:\n  image:\n    name: crd-upgrader\n", "v0.17.0")
    [item] = [i for i in plan["items"] if i["section"] == "upcoming"]
    assert "helm-hooks" in item["text"] and "no release yet" in item["text"]
    assert "changed-20260916-171806.yaml" in item["source"]


def test_markdown_escapes_and_marks(tmp_path: Path) -> None:
    code, out, _ = _plan(tmp_path, "v0.16.8", "admission:\n  certSecretName: my-tls\n", "v0.17.0", "-o", "markdown")
    assert code == 2
    assert out.startswith("<!-- kai-gitops-upgrade-plan -->\n### KAI upgrade plan: lab `v0.16.8` → `v0.17.0`")
    assert "| ❗ | `admission.certSecretName` (kai-values.yaml:2) |" in out
    assert "#### Steps, in order" in out and "&#8203;" in out  # "#1791" does not link an issue


def test_text_lists_sections_and_steps(tmp_path: Path) -> None:
    code, out, _ = _plan(tmp_path, "v0.16.8", "{}\n", "v0.17.0")
    assert code == 0
    assert out.splitlines()[0] == "kai-gitops upgrade-plan — cluster lab (standalone): KAI chart v0.16.8 → v0.17.0"
    assert "CRD changes:" in out and "Steps, in order:" in out and "new value(s), each at its default" in out
    assert out.rstrip().endswith("No value in Git must change before the upgrade; read the changes above.")
    _, markdown, _ = _plan(tmp_path / "md", "v0.16.8", "{}\n", "v0.17.0", "-o", "markdown")
    verdict = markdown.index("No value in Git must change before the upgrade; read the changes below.")
    assert verdict < markdown.index("#### CRD changes")  # the markdown view leads with it


def test_several_clusters_need_cluster(tmp_path: Path) -> None:
    config = standalone_config(name="a") + standalone_config(name="b").split("clusters:\n", 1)[1]
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": config, "kai-values.yaml": "{}\n"})
    code, _, err = run_cli(["upgrade-plan", "--repo", repo, "--to", "v0.17.0"])
    assert code == 1 and "choose one with --cluster" in err


def test_a_pin_ahead_of_the_models_is_read_as_the_nearest(tmp_path: Path) -> None:
    _, plan = _json(tmp_path, "v0.16.7", "{}\n", "v0.17.0")
    assert plan["fromModel"] == "v0.16.9"  # the newest model of the pin's minor line (values equal v0.16.8's)
    assert any("v0.16.7 is read as v0.16.9" in note for note in plan["notes"])


# -- the default shard plugins and actions ---------------------------------------------------------------------


def _go_defaults(release: str) -> tuple[dict[str, int], dict[str, int], set[str]]:
    """A release's default plugin and action priorities and its built-in plugins, read from its Go source."""
    root = FIXTURES / "kai" / release / "pkg"
    go = (root / "apis" / "kai" / "v1" / "schedulingshard_types.go").read_text()

    def priorities(table: str) -> dict[str, int]:
        body = go.split(f"var {table} = map[string]int{{")[1].split("}")[0]
        return {name: int(value) for name, value in re.findall(r'"([a-z-]+)":\s+(\d+),', body)}

    registered = set(
        re.findall(r'RegisterPluginBuilder\("([a-z-]+)"', (root / "scheduler" / "plugins" / "factory.go").read_text())
    )
    return priorities("defaultPluginPriorities"), priorities("defaultActionPriorities"), registered


def test_the_plan_lists_the_default_shard_changes_between_the_pins(tmp_path: Path) -> None:
    """v0.14.7 -> v0.17.1, against both releases' Go source: the new default plugins with their priorities, the
    plugins built in from the target on (off by default), nothing else; each naming both releases' commits."""
    old_plugins, old_actions, old_builtin = _go_defaults("release-v0.14.7")
    new_plugins, new_actions, new_builtin = _go_defaults("release-v0.17.1")
    _, plan = _json(tmp_path, "v0.14.7", "{}\n", "v0.17.1")
    shard = {i["subject"]: i for i in plan["items"] if i["section"] == "shard"}
    added = new_plugins.keys() - old_plugins.keys()
    assert added == {"sg-nodelocalgreedy", "sg-multinodegang"}
    assert old_actions == new_actions and old_plugins.items() <= new_plugins.items()
    # factory.go registers the sg- plugins by a Go constant, which the regex does not read: they are defaults
    builtin = new_builtin - old_builtin - added
    assert builtin == {"numa"}
    assert set(shard) == added | builtin
    for name in added:
        assert shard[name]["kind"] == "added" and f"priority {new_plugins[name]}" in shard[name]["text"]
    assert "off unless a shard names it" in shard["numa"]["text"]
    assert {i["source"] for i in shard.values()} == {
        "KAI-Scheduler pkg/apis/kai/v1/schedulingshard_types.go (defaultPluginPriorities, defaultActionPriorities) "
        "and pkg/scheduler/plugins/factory.go (built-in plugins) at v0.14.7 (0baacb84) and v0.17 (df7f1407)"
    }
    assert not [n for n in plan["notes"] if "shard" in n]
    code, out, _ = _plan(tmp_path / "md", "v0.14.7", "{}\n", "v0.17.1", "-o", "markdown")
    assert code == 0 and "Default shard plugins and actions" in out and "sg-multinodegang" in out


def test_unchanged_shard_defaults_are_said(tmp_path: Path) -> None:
    """v0.16.8 and v0.17.1 default the same plugins and actions and build in the same ones (their Go sources)."""
    assert _go_defaults("release-v0.16.8") == _go_defaults("release-v0.17.1")
    _, plan = _json(tmp_path, "v0.16.8", "{}\n", "v0.17.1")
    assert not [i for i in plan["items"] if i["section"] == "shard"]
    assert "the default shard plugins and actions of v0.16.8 and v0.17.1 are the same" in plan["notes"]


def test_a_pin_without_shard_defaults_is_noted(tmp_path: Path) -> None:
    _, plan = _json(tmp_path, "v0.10.5", "{}\n", "v0.17.1")
    assert not [i for i in plan["items"] if i["section"] == "shard"]
    assert any("v0.10.5 has no modelled default shard plugins" in note for note in plan["notes"])


# -- a deprecated key the chart still renders ----------------------------------------------------------------


def test_a_deprecated_key_still_rendered_is_not_said_to_be_dropped(tmp_path: Path) -> None:
    """The v0.17 branch's kai-config template renders admission.gpuPodRuntimeClassName when the values set it and
    not gpuFractionRuntimeClassName (tests/fixtures/kai/key-history/helpers-v0.17-branch.tpl): no "no longer
    rendered" line for it, while the defaults section says where its default went."""
    helpers = (FIXTURES / "kai" / "key-history" / "helpers-v0.17-branch.tpl").read_text()
    assert '{{- else if hasKey .Values.admission "gpuPodRuntimeClassName" }}\n    gpuPodRuntimeClassName:' in helpers
    assert "admission.gpuPodRuntimeClassName" in column_fields("v0.17.1")
    _, plan = _json(tmp_path, "v0.14.7", "{}\n", "v0.17.1")
    config = {i["subject"]: i["kind"] for i in plan["items"] if i["section"] == "config"}
    assert "spec.admission.gpuPodRuntimeClassName" not in config
    assert config["spec.admission.gpuFractionRuntimeClassName"] == "added"
    defaults = [i for i in plan["items"] if i["section"] == "defaults"]
    assert [i["kind"] for i in defaults if i["subject"] == "admission.gpuPodRuntimeClassName"] == ["moved"]


# -- a CRD change backported to two release lines -----------------------------------------------------------

MIN_MEMBER_ZERO = {
    "apiVersion": "scheduling.run.ai/v2alpha2",
    "kind": "PodGroup",
    "metadata": {"name": "pg"},
    "spec": {"queue": "q", "minMember": 0},
}


def _accepts_min_member_zero(version: str) -> bool:
    """Read from the stored CRD schema of the release that serves `version`, not from the plan's table."""
    found = validator(ServedKind(crd_version_for(version), "PodGroup", "scheduling.run.ai/v2alpha2"))
    assert found is not None
    return not list(found.iter_errors(MIN_MEMBER_ZERO))


@pytest.mark.parametrize(
    ("pin", "target"),
    [
        ("v0.16.8", "v0.16.9"),
        ("v0.16.9", "v0.17.0"),
        ("v0.16.9", "v0.17.1"),
        ("v0.17.0", "v0.17.1"),
        ("v0.16.7", "v0.17.1"),
        ("v0.14.7", "v0.17.0"),
    ],
)
def test_min_member_zero_is_listed_exactly_when_the_target_brings_it(tmp_path: Path, pin: str, target: str) -> None:
    """minMember 0 came with #1989, backported to v0.16.9 and v0.17.1 but not in v0.17.0: a v0.16.9 cluster
    already has it, a v0.16.7 one (v0.16.8's CRDs) gets it from v0.17.1."""
    _, plan = _json(tmp_path, pin, "{}\n", target)
    listed = [
        i for i in plan["items"] if i["section"] == "crds" and i["subject"].endswith("spec.minMember, spec.minSubGroup")
    ]
    assert bool(listed) == (_accepts_min_member_zero(target) and not _accepts_min_member_zero(pin))
    for item in listed:
        assert "#2017 (7e677370, v0.16 branch) and #2018 (a72e24dc, v0.17 branch)" in item["source"]
        assert "from v0.16.9 and v0.17.1, a fix backported to each line" in item["text"]


# -- the demo's clusters ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target


@pytest.mark.parametrize("cluster", ["prod-addon", "lab-standalone"])
def test_the_demo_clusters_plan_to_the_newest_modelled_release(demo_repo: Path, cluster: str) -> None:
    newest = target_versions()[-1]
    code, out, err = run_cli(["upgrade-plan", "--repo", demo_repo, "--cluster", cluster, "--to", newest, "-o", "json"])
    assert code in (0, 2), err
    plan = json.loads(out)
    assert plan["cluster"] == cluster and plan["to"] == newest
    assert {i["section"] for i in plan["items"]} >= {"defaults", "crds", "reminders"}


def test_the_plan_model_matches_the_cli(demo_repo: Path) -> None:
    [desired] = desired_clusters(open_desired(GitSettings(str(demo_repo), "HEAD", False)), "lab-standalone")
    plan = build_upgrade_plan(desired, "v0.17.0")
    assert plan.current == "v0.14.7" and plan.section(Section.KEYS) == []
    assert not plan.changes_needed


# -- downgrades: refused, one line naming both versions ----------------------------------------------------------


def test_a_target_older_than_the_pin_is_refused_naming_both(tmp_path: Path) -> None:
    code, out, err = _plan(tmp_path, "v0.14.7", "{}\n", "v0.10.5")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "v0.10.5 is older than the pin v0.14.7 of lab: a downgrade" in err and "crd-upgrader" not in err


def test_a_pin_newer_than_every_model_is_not_modelled(tmp_path: Path) -> None:
    """v0.17.99 was read as v0.17.1, and `--to v0.17.1` planned the downgrade as an upgrade with exit 0."""
    newest = target_versions()[-1]
    code, out, err = _plan(tmp_path, "v0.17.99", "{}\n", newest)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert f"the pin v0.17.99 of lab is newer than every KAI chart kai-gitops models (newest {newest})" in err
    assert "not modelled" in err


def test_a_downgrade_in_a_pull_request_is_named_a_downgrade(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.16.8"), "kai-values.yaml": "{}\n"}
    repo, _ = make_repo(tmp_path, files, [{"kai-gitops.yaml": standalone_config(version="v0.14.7")}])
    code, out, err = run_cli(["check", "--repo", repo, "--base", "HEAD~1", "-o", "json"])
    assert code in (0, 2), err
    [pin] = [f for c in json.loads(out)["clusters"] for f in c["findings"] if f["rule"] == "KAI-V-018"]
    assert "v0.16.8 → v0.14.7 for lab is a downgrade" in pin["message"] and "--to v0.14.7" not in pin["message"]


# -- KAI-V-018 in the PR check --------------------------------------------------------------------------------


def test_a_pin_change_in_a_pull_request_is_named_with_its_plan(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.16.8"),
        "kai-values.yaml": "admission:\n  certSecretName: my-tls\n",
    }
    moved = {"kai-gitops.yaml": standalone_config(version="v0.17.0")}
    repo, _ = make_repo(tmp_path, files, [moved])
    code, out, err = run_cli(["check", "--repo", repo, "--base", "HEAD~1", "-o", "json"])
    assert code == 2, err
    findings = [f for c in json.loads(out)["clusters"] for f in c["findings"]]
    [pin] = [f for f in findings if f["rule"] == "KAI-V-018"]
    assert pin["severity"] == "info" and pin["location"]["file"] == "kai-gitops.yaml"
    assert "v0.16.8 → v0.17.0" in pin["message"]
    assert "kai-gitops upgrade-plan --cluster lab --to v0.17.0" in pin["message"]
    assert [f["location"]["path"] for f in findings if f["rule"] == "KAI-V-015"] == ["admission.certSecretName"]


def test_no_pin_change_no_finding(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(version="v0.16.8"), "kai-values.yaml": "{}\n"}
    repo, _ = make_repo(tmp_path, files, [{"kai-values.yaml": "global:\n  tag: v1\n"}])
    code, out, err = run_cli(["check", "--repo", repo, "--base", "HEAD~1", "-o", "json"])
    assert code in (0, 2), err
    assert not [f for c in json.loads(out)["clusters"] for f in c["findings"] if f["rule"] == "KAI-V-018"]


# -- secrets: the plan quotes the user's values, as the redaction shows them -------------------------------------

TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.parametrize("view", ["text", "markdown", "json"])
def test_a_token_in_a_renamed_or_reinterpreted_value_is_redacted_in_every_view(tmp_path: Path, view: str) -> None:
    """global.fips (renamed in v0.17.1, its value quoted in 'write … instead') and global.fipsMode (a value
    v0.17.1 does not act on, quoted) each holding a GitHub token: the plan names the keys, never the token."""
    values = f'global:\n  fips: "{TOKEN}"\n  fipsMode: "{TOKEN}"\n'
    code, out, err = _plan(tmp_path, "v0.14.7", values, "v0.17.1", "-o", view)
    assert code == 2, err
    assert TOKEN not in out and TOKEN[4:20] not in out
    assert "global.fips" in out and "global.fipsMode" in out and "redacted" in out  # Markdown escapes its <>
