"""KAI manifests read from Git, field by field against the pinned version's CRD schema (KAI-V-020, -021, -022).

The planted mistakes are in tests/manifest_schema_corpus/ (its README says how a case is written): each one runs
through the CLI on a real repository and must raise exactly its expected findings at their lines. The
repository's own examples (tests/checks/test_planted_corpus.py) and upstream's example manifests must raise none. The
schemas themselves are checked against the CRDs they were extracted from (tests/fixtures/kai/*.yaml, KAI v0.17.0).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.findings.finding import GitEdit
from reconciler.gitfix.yaml_splice import apply_edits
from reconciler.model.crd_schemas import (
    ServedKind,
    crd_version_for,
    field_paths,
    schema_versions,
    to_json_schema,
    validator,
)
from reconciler.model.kai_config import COLUMNS, ValueSource, render_kai_config
from reconciler.model.values import chart_defaults
from tests.support.helpers import FIXTURES, make_repo, run_cli, standalone_config
from tools.kai_crds import main as kai_crds_main
from tools.kai_crds import strip, write_crd_schemas, write_schemas

CORPUS = Path(__file__).parents[1] / "manifest_schema_corpus"
CASES = sorted(CORPUS.glob("*.yaml"))
RULES = ("KAI-V-020", "KAI-V-021", "KAI-V-022")
_EXPECT = re.compile(r"^# expect: (KAI-V-\d{3}) (\S+) @(\d+) (.+)$", re.M)
_HEADER = re.compile(r"^# (pin|as): (\S+)$", re.M)
_NEVER = re.compile(r"^# never: (.+)$", re.M)
WORKLOAD = "\nworkloads:\n  - name: fn\n    clusters: [lab]\n    manifests: {path}\n"


def _setup(text: str, name: str) -> tuple[str, dict[str, str]]:
    header = dict(_HEADER.findall(text))
    path = f"manifests/{name}"
    files = {"kai-values.yaml": "{}\n", path: text}
    match header["as"]:
        case "queues":
            config = standalone_config(version=header["pin"], queue_files=[path])
        case "kai-manifests":
            config = standalone_config(version=header["pin"], extra=f"    kaiManifestFiles: [{path}]\n")
        case _:
            config = standalone_config(version=header["pin"]) + WORKLOAD.format(path=path)
    return path, files | {"kai-gitops.yaml": config}


def _schema_findings(tmp_path: Path, files: dict[str, str]) -> list[dict[str, Any]]:
    repo, _ = make_repo(tmp_path, files)
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])
    assert code in (0, 2), err
    return [f for c in json.loads(out)["clusters"] for f in c["findings"] if f["rule"] in RULES]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_planted_mistake_is_found_at_its_line(tmp_path: Path, case: Path) -> None:
    text = case.read_text()
    expected = _EXPECT.findall(text)
    assert expected, f"{case.name} expects nothing"
    path, files = _setup(text, case.name)
    found = _schema_findings(tmp_path, files)
    got = {(f["rule"], f["location"]["path"], f["location"]["line"]): f["message"] for f in found}
    assert {(f["location"]["file"]) for f in found} <= {path}
    assert sorted(got) == sorted((rule, where, int(line)) for rule, where, line, _ in expected)
    for rule, where, line, words in expected:
        assert words in got[(rule, where, int(line))], got[(rule, where, int(line))]
    for words in _NEVER.findall(text):
        assert not [m for m in got.values() if words in m], words


def test_corpus_covers_every_rule_and_kind() -> None:
    expected = [m for case in CASES for m in _EXPECT.findall(case.read_text())]
    kinds = {re.search(r"^kind: (\w+)$", case.read_text(), re.M)[1] for case in CASES}
    assert {rule for rule, *_ in expected} == set(RULES)
    assert kinds == {"Queue", "SchedulingShard", "Config", "PodGroup", "Topology"}
    assert len(expected) >= 25


def test_misspelt_parent_says_queue_results_are_incomplete(tmp_path: Path) -> None:
    text = (CORPUS / "queue-parent-typo.yaml").read_text()
    _, files = _setup(text, "queues.yaml")
    [parent] = [f for f in _schema_findings(tmp_path, files) if f["location"]["path"] == "spec.parentQueu"]
    assert parent["severity"] == "error"
    assert "team-a is a top-level queue" in parent["message"]
    assert "queue-tree results for team-a" in parent["message"] and "incomplete" in parent["message"]
    assert parent["fix"]["description"] == "rename parentQueu to parentQueue"


# the repository's own examples: tests/checks/test_planted_corpus.py


# upstream's example manifests (tests/fixtures/SOURCES.md: KAI v0.17.0's docs, the NVCF stack's golden render of
# KAI v0.16.x), each at the current releases
CURRENT = ("v0.16.8", "v0.16.9", "v0.17.0", "v0.17.1")
VALID_EXAMPLES = [
    "kai/examples/fairshare-queues.yaml",
    "kai/examples/limited-queue.yaml",
    "kai/examples/quickstart-default-queues.yaml",
    "nvcf/golden/kai-default-queues.yaml",
    "nvcf/golden/kai-default-shard.yaml",
    "nvcf/golden/kai-topology.yaml",
]


@pytest.mark.parametrize("example", VALID_EXAMPLES)
def test_upstream_examples_are_valid_at_every_version(example: str) -> None:
    docs = [d for d in yaml.safe_load_all((FIXTURES / example).read_text()) if isinstance(d, dict)]
    assert docs
    checked = 0
    for doc in docs:
        for version in CURRENT:
            found = validator(ServedKind(version, doc["kind"], doc["apiVersion"]))
            if found is not None:
                assert [e.message for e in found.iter_errors(doc)] == [], (version, doc["metadata"])
                checked += 1
    assert checked


def test_example_queues_pass_through_the_check(tmp_path: Path) -> None:
    """The same examples kept as queue files of a cluster: no finding of the schema rules."""
    files = {
        "kai-values.yaml": "{}\n",
        "kai-gitops.yaml": standalone_config(version="v0.17.0", queue_files=["q/fairshare.yaml", "q/limited.yaml"]),
        "q/fairshare.yaml": (FIXTURES / "kai/examples/fairshare-queues.yaml").read_text(),
        "q/limited.yaml": (FIXTURES / "kai/examples/limited-queue.yaml").read_text(),
    }
    assert _schema_findings(tmp_path, files) == []


def test_stored_schema_is_the_fixture_crds_schema() -> None:
    """v0.17.0's stored schemas are the fixture CRDs' (KAI v0.17.0), descriptions dropped."""
    for crd_file, kind, api_version in (
        ("scheduling.run.ai_queues.yaml", "Queue", "scheduling.run.ai/v2"),
        ("scheduling.run.ai_podgroups.yaml", "PodGroup", "scheduling.run.ai/v2alpha2"),
    ):
        crd = yaml.safe_load((FIXTURES / "kai" / crd_file).read_text())
        [served] = [v for v in crd["spec"]["versions"] if f"{crd['spec']['group']}/{v['name']}" == api_version]
        stored = validator(ServedKind("v0.17.0", kind, api_version))
        assert stored is not None
        expected = to_json_schema(strip(served["schema"]["openAPIV3Schema"]))
        assert {k: v for k, v in stored.schema.items() if k != "properties"} == {
            k: v for k, v in expected.items() if k != "properties"
        }
        assert stored.schema["properties"]["spec"] == expected["properties"]["spec"]


def test_structural_rules() -> None:
    """Pruning, int-or-string, null and preserve-unknown-fields as the API server has them."""
    schema = to_json_schema(
        {
            "type": "object",
            "properties": {
                "known": {"type": "integer"},
                "size": {
                    "x-kubernetes-int-or-string": True,
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                    "pattern": "^[0-9]+(Gi|Mi)?$",
                },
                "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "kind": {"type": "string", "enum": ["a", "b"]},
            },
        }
    )
    assert schema["additionalProperties"] is False
    assert "additionalProperties" not in schema["properties"]["open"]
    assert schema["properties"]["size"]["type"] == ["integer", "string", "null"]
    assert "anyOf" not in schema["properties"]["size"]
    assert schema["properties"]["kind"]["enum"] == ["a", "b", None]


@pytest.mark.parametrize(
    ("pin", "modelled"),
    [
        ("v0.17.1", "v0.17.1"),
        ("0.16.8", "v0.16.8"),
        ("v0.17.5", "v0.17.1"),
        ("v0.16.7", "v0.16.8"),
        ("v0.12.20", "v0.12.13"),
        ("v0.12.5", "v0.12.13"),
        ("v0.11.0", "v0.10.5"),
        ("v0.8.0", "v0.9.20"),
    ],
)
def test_pin_maps_to_the_release_whose_crds_it_serves(pin: str, modelled: str) -> None:
    assert crd_version_for(pin) == modelled


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args], check=True, capture_output=True
    )


def test_tool_writes_each_schema_once_with_its_source(tmp_path: Path) -> None:
    """tools/kai_crds.py on a KAI-like repository: the fixture Queue CRD at two tags, the PodGroup CRD changed
    by the second; identical schemas are stored once, descriptions dropped, the commit recorded."""
    kai = tmp_path / "kai"
    crds = kai / "deployments/kai-scheduler/crds"
    crds.mkdir(parents=True)
    _git(kai, "init", "-q")
    (crds / "scheduling.run.ai_queues.yaml").write_text((FIXTURES / "kai/scheduling.run.ai_queues.yaml").read_text())
    podgroups = (FIXTURES / "kai/scheduling.run.ai_podgroups.yaml").read_text()
    (crds / "scheduling.run.ai_podgroups.yaml").write_text(podgroups)
    _git(kai, "add", "-A")
    _git(kai, "commit", "-qm", "one")
    _git(kai, "tag", "v1.0.0")
    (crds / "scheduling.run.ai_podgroups.yaml").write_text(podgroups.replace("minimum: 1", "minimum: 0"))
    _git(kai, "commit", "-qam", "two")
    out = tmp_path / "crds"
    write_crd_schemas(kai, "v1.0.0", "v1.0.0", out)
    write_crd_schemas(kai, "HEAD", "v1.0.1", out)
    index = json.loads((out / "index.json").read_text())
    assert list(index) == ["v1.0.0", "v1.0.1"]
    assert index["v1.0.0"]["kinds"]["Queue"] == index["v1.0.1"]["kinds"]["Queue"]
    assert index["v1.0.0"]["kinds"]["PodGroup"] != index["v1.0.1"]["kinds"]["PodGroup"]
    assert len(list(out.glob("*-*.json"))) == 3
    assert len(index["v1.0.1"]["source"]["commit"]) == 40
    stored = (out / index["v1.0.0"]["kinds"]["Queue"]["scheduling.run.ai/v2"]).read_text()
    assert '"description"' not in stored and '"parentQueue"' in stored


def test_tool_refuses_a_branch_as_the_version_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kai_crds.py v0.17` (a branch, no --version) wrote a schema file, then crashed sorting the index on
    int('17')/int('main'), leaving an orphan file in reconciler/data/crds: now refused before anything is written."""
    out = tmp_path / "crds"
    out.mkdir()
    (out / "index.json").write_text("{}\n")
    with pytest.raises(ValueError, match="'main' is not a release tag"):
        write_schemas({"Queue": {"scheduling.run.ai/v2": {"type": "object"}}}, "main", {"ref": "main"}, out)
    assert [p.name for p in out.iterdir()] == ["index.json"]
    with pytest.raises(SystemExit) as exited:
        kai_crds_main(["--mirror", str(tmp_path / "absent"), "v0.17", "--out", str(out)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "ref 'v0.17' is not a release tag such as v0.17.1: give a branch with --version vX.Y.Z" in err
    assert "Traceback" not in err and [p.name for p in out.iterdir()] == ["index.json"]


PARENT_AND_CHILD = """apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: research}
spec:
  resources:
    gpu: {quota: 4, limit: 4}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  PARENT: research
  resources:
    gpu: {quota: 8, limit: 8}
"""


def test_the_typo_that_hid_child_above_parent_is_now_an_error(tmp_path: Path) -> None:
    """The issue's case: with `parentQueu` the child is top-level and KAI-Q-022 (child above its parent) is not
    raised; the typo is, and it says the queue-tree results are incomplete. Spelt right, KAI-Q-022 is there."""

    def rules(parent_key: str, where: Path) -> dict[str, list[str]]:
        repo, _ = make_repo(
            where,
            {
                "kai-values.yaml": "{}\n",
                "q.yaml": PARENT_AND_CHILD.replace("PARENT", parent_key),
                "kai-gitops.yaml": standalone_config(version="v0.17.0", queue_files=["q.yaml"]),
            },
        )
        code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])
        assert code == 2, err
        found: dict[str, list[str]] = {}
        for f in json.loads(out)["clusters"][0]["findings"]:
            found.setdefault(f["rule"], []).append(f["message"])
        return found

    typo = rules("parentQueu", tmp_path / "typo")
    assert "KAI-Q-022" not in typo
    [message] = typo["KAI-V-020"]
    assert "did you mean parentQueue?" in message and "incomplete" in message
    right = rules("parentQueue", tmp_path / "right")
    assert "KAI-Q-022" in right and "KAI-V-020" not in right


def test_field_changes_between_releases_match_upstream() -> None:
    """What KAI changed between v0.16.8 and v0.17.0 (KAI-Scheduler `git diff v0.16.8 v0.17.0 --
    deployments/kai-scheduler/crds/`), read back from the stored schemas."""

    def change(kind: str, api_version: str) -> tuple[set[str], set[str]]:
        old, new = (field_paths(v, kind, api_version) for v in ("v0.16.8", "v0.17.0"))
        return set(new - old), set(old - new)

    added, removed = change("PodGroup", "scheduling.run.ai/v2alpha2")
    assert {"spec.preemptionDelay", "spec.stalenessGracePeriod"} <= added
    assert {"status.phase", "status.running", "status.succeeded", "status.failed", "status.pending"} <= removed
    added, removed = change("SchedulingShard", "kai.scheduler/v1")
    assert {"spec.goMemLimit", "spec.goMemLimitRatio"} <= added
    added, _ = change("Topology", "kai.scheduler/v1alpha1")
    assert added == {"spec.levels[].alias"}
    assert change("Queue", "scheduling.run.ai/v2") == (set(), set())
    added, _ = change("Config", "kai.scheduler/v1")
    assert {"spec.global.priorityClassName", "spec.podGrouper.args.genericKartaFallback"} <= added


def test_respelling_is_a_git_edit_of_the_right_document(tmp_path: Path) -> None:
    """A unique "did you mean" in a queue file is a rename `--fix-git` applies to that document of the file;
    a workload's objects (rendered from templates) get none."""
    text = "# team queues\n" + PARENT_AND_CHILD.replace("PARENT", "parentQueu")
    _, files = _setup("# pin: v0.17.0\n# as: queues\n" + text, "q.yaml")
    [finding] = _schema_findings(tmp_path, files)
    [edit] = finding["fix"]["git_edits"]
    assert (edit["op"], edit["doc"], edit["value"]) == ("rename", 1, "parentQueue")
    fixed = apply_edits(files["manifests/q.yaml"].encode(), "manifests/q.yaml", [GitEdit.from_dict(edit)])
    assert fixed.decode() == files["manifests/q.yaml"].replace("parentQueu:", "parentQueue:")
    _, files = _setup("# pin: v0.17.0\n# as: workload\n" + text, "q.yaml")
    [finding] = _schema_findings(tmp_path / "workload", files)
    assert finding["fix"]["git_edits"] == []


def test_every_modelled_chart_version_has_its_crds() -> None:
    """A release added to the chart models (model/kai_config.py COLUMNS) comes with its CRD schemas."""
    assert set(COLUMNS) <= set(schema_versions())


def test_a_secret_valued_field_is_not_shown(tmp_path: Path) -> None:
    shard = (
        "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata: {name: default}\nspec:\n"
        "  usageDBConfig:\n    clientType: prometheus\n    connectionString: [postgres://u:hunter2@db/x]\n"
    )
    files = {
        "kai-values.yaml": "{}\n",
        "shard.yaml": shard,
        "kai-gitops.yaml": standalone_config(version="v0.17.0", extra="    kaiManifestFiles: [shard.yaml]\n"),
    }
    [finding] = _schema_findings(tmp_path, files)
    assert finding["rule"] == "KAI-V-021" and "wants a string" in finding["message"]
    assert "hunter2" not in json.dumps(finding)


def test_the_stacks_rendered_config_is_valid_from_v0_16() -> None:
    """The kai-config the NVCF stack renders (KAI v0.16.x chart, golden render) names no field its CRD prunes
    from v0.16.8 on, and several that v0.15.3's CRD does not serve (v0.16's admission and exporter fields)."""
    configmap = next(
        d for d in yaml.safe_load_all((FIXTURES / "nvcf/golden/kai-config-manifest-configmap.yaml").read_text()) if d
    )
    config = yaml.safe_load(configmap["data"]["kai-config.yaml"])
    for version in CURRENT:
        found = validator(ServedKind(version, "Config", "kai.scheduler/v1"))
        assert found is not None and list(found.iter_errors(config)) == [], version
    older = validator(ServedKind("v0.15.3", "Config", "kai.scheduler/v1"))
    assert older is not None and list(older.iter_errors(config))


@pytest.mark.parametrize("version", COLUMNS)
def test_the_modelled_kai_config_is_valid_for_its_version(version: str) -> None:
    """What model/kai_config.py renders from a chart's defaults names only fields that version's CRD serves:
    the values -> Config model and the CRDs, written from different upstream files, agree."""
    rendered = render_kai_config(
        version, chart_defaults(version), ValueSource("kai_values", {}, ("config", ())), version
    )
    config = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {"name": "kai-config"},
        "spec": rendered.spec(),
    }
    found = validator(ServedKind(version, "Config", "kai.scheduler/v1"))
    assert found is not None
    assert [e.message for e in found.iter_errors(config)] == []
