"""Input size bounds memory and time: YAML values per file, answer bytes, list pages, message length, Rego budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import (
    CANONICAL_KAI_VALUES,
    assert_one_line_error,
    kai_crds,
    make_repo,
    run_cli,
    snapshot_file,
    standalone_config,
)

# -- YAML values per file -------------------------------------------------------------------------------------


def _flow_list_bomb(values: int) -> str:
    """Two bytes a value: within the 20 MB cap such a list is 10 million values (~40 s, ~6 GB before the budget)."""
    return CANONICAL_KAI_VALUES + "\nbomb: [" + "a," * values + "a]\n"


@pytest.mark.parametrize("reader", ["libyaml", "ruamel"])
@pytest.mark.parametrize("tail", ["", "# a tab sends the file to ruamel:\t\n"])
def test_a_flow_list_bomb_in_git_is_one_line_naming_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  reader: str, tail: str) -> None:
    from reconciler.yamlio import document

    monkeypatch.setattr(document, "MAX_NODES", 5_000)   # the real budget, 500,000, costs ~2 s to reach
    monkeypatch.setenv("KAI_GITOPS_YAML_READER", reader)
    values = _flow_list_bomb(5_010) + tail
    line = values[: values.index("bomb:")].count("\n") + 1
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, f"kai-values.yaml:{line}", "more than 5,000 YAML values")


def test_the_ruamel_reader_counts_values_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text libyaml cannot parse has no first pass: ruamel's composer stops it, naming the line."""
    from reconciler.core.errors import UserError
    from reconciler.yamlio.document import ruamel_documents

    with pytest.raises(UserError) as caught:
        ruamel_documents("a: 1\nb:\n" + "  - x\n" * 50, "f.yaml", max_nodes=20)
    assert caught.value.where == "f.yaml:18"   # the 21st value: the 16th item


def test_a_snapshot_past_its_value_budget_is_refused_naming_the_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.sources import snapshot

    snap = snapshot_file(tmp_path, kai_crds())
    monkeypatch.setattr(snapshot, "SNAPSHOT_MAX_NODES", 20)
    code, stdout, stderr = run_cli(["doctor", "--snapshot", snap])
    assert_one_line_error(code, stdout, stderr, "snapshot.yaml:", "more than 20 YAML values", "FILE.json")
