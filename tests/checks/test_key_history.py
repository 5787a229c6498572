"""The history of KAI's values keys (model/key_history.py) against its sources, and the findings it raises
(KAI-V-015 renamed or removed, KAI-V-016 deprecated, KAI-V-017 a value the template does not act on).

The table is checked two ways: every removal between adjacent shipped chart-values files must have a hand
entry that explains it, and each hand entry must agree with the upstream files copied into
tests/fixtures/kai/key-history/ (the v0.16 and v0.17 release branches, which the shipped files do not cover yet).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from reconciler.checks import values_keys
from reconciler.model.chart_keys import _tree
from reconciler.model.key_history import (
    ALLOWED_VALUES,
    FIPS,
    FIPS_MODE,
    KEY_CHANGES,
    Change,
    Subchart,
    change_at,
    computed_changes,
    explain_removal,
    leaf_paths,
    subchart,
)
from reconciler.model.values import parse_version, shipped_chart_versions
from tests.support.helpers import FIXTURES, make_repo, run_cli, standalone_config

HISTORY = FIXTURES / "kai" / "key-history"


def _keys(text: str) -> set[tuple[str, ...]]:
    return set(leaf_paths(_tree(YAML(typ="safe").load(text))))


def _has(keys: set[tuple[str, ...]], path: tuple[str, ...]) -> bool:
    return any(k[: len(path)] == path for k in keys)


# -- the table against the shipped chart-values files and the release branches ---------------------------------


def test_every_removal_between_adjacent_shipped_charts_is_explained() -> None:
    removals = [c for c in computed_changes() if c.change is Change.REMOVED]
    assert removals, "the shipped chart-values files drop keys between versions"
    unexplained = [(c.path, c.before, c.after) for c in removals if explain_removal(c) is None]
    assert unexplained == []


def test_every_hand_entry_agrees_with_the_shipped_files() -> None:
    """A key renamed, removed or deprecated is absent from every shipped values.yaml of a version that has the
    change, and the new key present; an added key appears first between two adjacent shipped files around it."""
    versions = shipped_chart_versions()
    for entry in KEY_CHANGES:
        assert entry.source and (entry.new_path is not None) == (entry.change in (Change.RENAMED, Change.DEPRECATED))
        for version in versions:
            keys = set(leaf_paths(_tree(_chart_values(version))))
            if entry.change is not Change.ADDED and entry.applies_to(version):
                assert not _has(keys, entry.path), (entry.path, version)
                assert entry.new_path is None or _has(keys, entry.new_path), (entry.new_path, version)
        since = parse_version(entry.version)
        if entry.change is Change.ADDED and since <= parse_version(versions[-1]):  # type: ignore[operator]
            assert any(
                c.change is Change.ADDED
                and c.path[: len(entry.path)] == entry.path
                and parse_version(c.before) < since <= parse_version(c.after)  # type: ignore[operator]
                for c in computed_changes()
            )


def _chart_values(version: str) -> Any:
    return YAML(typ="safe").load((FIXTURES / "kai" / "chart-values" / f"{version}.yaml").read_text())


def test_the_fips_rename_is_on_the_v0_17_branch_and_not_on_the_v0_16_branch() -> None:
    v17 = _keys((HISTORY / "values-v0.17-branch.yaml").read_text())
    v16 = _keys((HISTORY / "values-v0.16-branch.yaml").read_text())
    assert FIPS_MODE in v17 and FIPS not in v17
    assert [e.version for e in KEY_CHANGES if e.path == FIPS_MODE and e.change is Change.ADDED] == ["v0.17.1"]
    assert FIPS in v16 and FIPS_MODE not in v16
    assert change_at(FIPS, "v0.17.1") is not None and change_at(FIPS, "v0.16.9") is None
    # certSecretName went in v0.17.0; the v0.16 line still has it
    assert ("admission", "certSecretName") in v16 and ("admission", "certSecretName") not in v17
    assert change_at(("admission", "certSecretName"), "v0.16.9") is None


def test_the_fips_mode_values_are_the_ones_the_chart_documents_and_tests() -> None:
    values = (HISTORY / "values-v0.17-branch.yaml").read_text()
    documented = re.search(r"# Valid values: (.*)\n  fipsMode:", values)
    assert documented is not None
    [entry] = [a for a in ALLOWED_VALUES if a.path == FIPS_MODE]
    assert sorted(re.findall(r'"(\w+)"', documented[1])) == sorted(entry.values)
    helpers = (HISTORY / "helpers-v0.17-branch.tpl").read_text()
    assert 'eq .root.Values.global.fipsMode "on"' in helpers
    assert ".Values.global.fips " not in helpers and ".Values.global.fips}" not in helpers  # no fallback
    assert 'hasKey .Values.admission "gpuPodRuntimeClassName"' in helpers  # the deprecated key still honoured


# -- the planted mistakes: each must be reported, at its line, by the rule named ---------------------------------

CORPUS: list[tuple[str, str, str, str, int]] = [
    # (pin, values file, rule, the key's path, its line)
    ("v0.17.1", "global:\n  fips: true\n", "KAI-V-015", "global.fips", 2),
    ("v0.17.1", "global:\n  tag: v1\n  fips: false\n", "KAI-V-015", "global.fips", 3),
    ("v0.17.0", "admission:\n  certSecretName: my-tls\n", "KAI-V-015", "admission.certSecretName", 2),
    ("v0.17.1", "queuecontroller:\n  certSecretName: my-tls\n", "KAI-V-015", "queuecontroller.certSecretName", 2),
    ("v0.14.7", "binder:\n  cdi: true\n", "KAI-V-015", "binder.cdi", 2),
    ("v0.16.8", "admission:\n  gpuPodRuntimeClassName: nvidia\n", "KAI-V-016", "admission.gpuPodRuntimeClassName", 2),
    (
        "v0.17.0",
        "admission:\n  gpuFractionRuntimeClassName: nvidia\n  gpuPodRuntimeClassName: runc\n",
        "KAI-V-016",
        "admission.gpuPodRuntimeClassName",
        3,
    ),
    ("v0.17.1", "global:\n  fipsMode: on\n", "KAI-V-017", "global.fipsMode", 2),
    ("v0.17.1", 'global:\n  fipsMode: "true"\n', "KAI-V-017", "global.fipsMode", 2),
    ("v0.17.1", 'global:\n  fipsMode: "only"\n', "KAI-V-017", "global.fipsMode", 2),
    ("v0.17.1", 'global:\n  fipsMode: "On"\n', "KAI-V-017", "global.fipsMode", 2),
    ("v0.17.1", "global:\n  fipsMode: yes\n", "KAI-V-017", "global.fipsMode", 2),
    ("v0.17.0", "gpu-fractioning:\n  replicas: 2\n", "KAI-V-011", "gpu-fractioning", 1),
    ("v0.16.8", "kaiConfig:\n  render: true\n", "KAI-V-011", "kaiConfig", 1),
]


def _check(tmp_path: Path, pin: str, values: str) -> dict[str, Any]:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(version=pin), "kai-values.yaml": values})
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])
    assert code in (0, 2), err
    report: dict[str, Any] = json.loads(out)
    return report


def _hits(report: dict[str, Any], *rules: str) -> list[dict[str, Any]]:
    return [f for c in report["clusters"] for f in c["findings"] if f["rule"] in rules]


@pytest.mark.parametrize(
    ("pin", "values", "rule", "path", "line"), CORPUS, ids=[f"{c[2]}-{c[3]}-{i}" for i, c in enumerate(CORPUS)]
)
def test_a_planted_mistake_is_reported_at_its_key(
    tmp_path: Path, pin: str, values: str, rule: str, path: str, line: int
) -> None:
    report = _check(tmp_path, pin, values)
    hits = [f for f in _hits(report, rule) if f["location"]["path"] == path]
    assert len(hits) == 1, _hits(report, "KAI-V-011", "KAI-V-015", "KAI-V-016", "KAI-V-017")
    assert hits[0]["location"]["line"] == line
    # one finding per key: the history rules replace the plain "unknown key"
    others = [
        f
        for f in _hits(report, "KAI-V-010", "KAI-V-011", "KAI-V-015", "KAI-V-016", "KAI-V-017")
        if f["location"]["path"] == path and f is not hits[0]
    ]
    assert others == []


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 12
    assert {c[2] for c in CORPUS} >= {"KAI-V-015", "KAI-V-016", "KAI-V-017"}


def test_the_messages_name_the_version_and_the_new_key(tmp_path: Path) -> None:
    report = _check(
        tmp_path, "v0.17.1", "global:\n  fips: true\nadmission:\n  gpuPodRuntimeClassName: x\n  certSecretName: y\n"
    )
    by_path = {f["location"]["path"]: f for f in _hits(report, "KAI-V-015", "KAI-V-016")}
    assert "renamed to global.fipsMode by KAI chart v0.17.1" in by_path["global.fips"]["message"]
    assert "#2011" in by_path["global.fips"]["message"]
    assert (
        "deprecated since KAI chart v0.16.0 in favour of admission.gpuFractionRuntimeClassName"
        in by_path["admission.gpuPodRuntimeClassName"]["message"]
    )
    assert "removed by KAI chart v0.17.0" in by_path["admission.certSecretName"]["message"]
    assert by_path["admission.certSecretName"]["fix"]["git_edits"] == []  # nothing to rename it to
    assert by_path["admission.gpuPodRuntimeClassName"]["severity"] == "warning"


def test_the_v0_16_line_keeps_global_fips(tmp_path: Path) -> None:
    report = _check(tmp_path, "v0.16.9", "global:\n  fips: true\nadmission:\n  certSecretName: y\n")
    assert _hits(report, "KAI-V-011", "KAI-V-015", "KAI-V-016", "KAI-V-017") == []


def test_a_correct_fips_mode_passes(tmp_path: Path) -> None:
    for i, value in enumerate(('"on"', '"off"', "'on'")):
        report = _check(tmp_path / str(i), "v0.17.1", f"global:\n  fipsMode: {value}\n")
        assert _hits(report, "KAI-V-011", "KAI-V-015", "KAI-V-017") == []


def test_fix_git_renames_fips_and_converts_its_value(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(version="v0.17.1"),
        "kai-values.yaml": "global:\n  fips: true  # FIPS images\nadmission:\n  gpuPodRuntimeClassName: nvidia\n"
        "  certSecretName: old\n",
    }
    repo, _ = make_repo(tmp_path, files)
    code, _, err = run_cli(["check", "--repo", repo, "--fix-git-dry-run"])
    assert code == 2
    assert '-  fips: true  # FIPS images\n+  fipsMode: "on"  # FIPS images' in err
    assert "-  gpuPodRuntimeClassName: nvidia\n+  gpuFractionRuntimeClassName: nvidia" in err
    assert "certSecretName" not in err.split("no automatic fix", 1)[0]  # a removed key is left to the user


def test_no_rename_when_the_new_key_is_set_too(tmp_path: Path) -> None:
    report = _check(
        tmp_path, "v0.17.0", "admission:\n  gpuFractionRuntimeClassName: nvidia\n  gpuPodRuntimeClassName: runc\n"
    )
    [hit] = _hits(report, "KAI-V-016")
    assert hit["fix"]["git_edits"] == [] and "is set too and wins" in hit["fix"]["description"]


def test_an_unquoted_on_is_fixed_to_the_string(tmp_path: Path) -> None:
    report = _check(tmp_path, "v0.17.1", "global:\n  fipsMode: on\n")
    [hit] = _hits(report, "KAI-V-017")
    assert "the boolean true" in hit["message"]
    assert [(e["op"], e["value"]) for e in hit["fix"]["git_edits"]] == [("set", "on")]


def test_only_names_where_it_comes_from(tmp_path: Path) -> None:
    report = _check(tmp_path, "v0.17.1", "global:\n  fipsMode: only\n")
    [hit] = _hits(report, "KAI-V-017")
    assert "'only' comes with KAI-Scheduler main after v0.17.1" in hit["message"]


# the repository's own examples and init: tests/checks/test_planted_corpus.py


def test_subchart_values_are_dropped_while_the_gate_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No shipped release has the gpu-fractioning subchart yet, so its gate is checked with a release that
    would: the same dependency, as if it had shipped with v0.17.0."""
    real = subchart("gpu-fractioning")
    assert real is not None and real.gate == ("global", "nvFractions", "set") and not real.in_chart("v0.17.1")
    shipped = Subchart(real.key, real.gate, "v0.17.0", real.source)
    monkeypatch.setattr(values_keys, "subchart", lambda key: shipped if key == real.key else None)
    report = _check(tmp_path / "off", "v0.17.0", "gpu-fractioning:\n  replicas: 2\n")
    [hit] = [f for f in _hits(report, "KAI-V-010") if f["location"]["path"] == "gpu-fractioning"]
    assert "rendered only when global.nvFractions.set is true" in hit["message"]
    report = _check(
        tmp_path / "on", "v0.17.0", "global:\n  nvFractions:\n    set: true\ngpu-fractioning:\n  replicas: 2\n"
    )
    assert [f for f in _hits(report, "KAI-V-010", "KAI-V-011") if f["location"]["path"] == "gpu-fractioning"] == []


def test_a_key_of_a_later_release_names_it(tmp_path: Path) -> None:
    report = _check(tmp_path, "v0.17.0", 'global:\n  fipsMode: "on"\n')
    [hit] = _hits(report, "KAI-V-011")
    assert "KAI chart v0.17.1 adds it" in hit["message"] and "#2011" in hit["message"]
