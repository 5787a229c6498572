"""tools/kai_release.py: the shipped model of a KAI release is what the command writes from its source.

The source is a copy of the upstream files at the `v0.17` branch head (tests/fixtures/kai/release-v0.17.1/,
tests/fixtures/SOURCES.md); the command runs over it as a developer runs it over a clone, and every file it
writes must equal the one shipped in reconciler/data.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import FIXTURES

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "kai_release.py"
TREE = FIXTURES / "kai" / "release-v0.17.1"
DATA = REPO / "reconciler" / "data"
V0_17_HEAD = "df7f140767683699eb88bd60e0f36c6238c22d0d"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, check=False, cwd=REPO
    )


def test_the_shipped_v0_17_1_model_is_what_the_command_writes(tmp_path: Path) -> None:
    done = _run("--tree", TREE, "--ref", "v0.17", "--commit", V0_17_HEAD, "--as", "v0.17.1", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["chart-values/v0.17.1.yaml", "shard-defaults/v0.17.1.json"]
    for name in written:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
    assert done.stdout.split() == [str(tmp_path / name) for name in written]


def test_the_tables_are_read_from_the_go_source_not_assumed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    types = tree / "pkg" / "apis" / "kai" / "v1" / "schedulingshard_types.go"
    types.write_text(
        types.read_text().replace(
            '"gpusharingorder":    100,', '"gpusharingorder":    100,\n\t"backgroundpods":     50,'
        )
    )
    assert _run("--tree", tree, "--as", "v9.9.9", "--out", tmp_path / "out").returncode == 0
    data = json.loads((tmp_path / "out" / "shard-defaults" / "v9.9.9.json").read_text())
    assert data["plugins"]["backgroundpods"] == 50 and len(data["plugins"]) == 23
    assert data["optionalPlugins"] == ["numa", "reflectjoborder"]  # sg-* resolved through <pkg>.Name


@pytest.mark.parametrize(
    ("breakage", "said"),
    [
        (
            lambda t: (t / "pkg/apis/kai/v1/schedulingshard_types.go").write_text(
                "func (s *SchedulingShardSpec) setDefaultPlugins() {}\n"
            ),
            "no `var defaultPluginPriorities",
        ),
        (lambda t: (t / "pkg/scheduler/plugins/nodelocalgreedy/nodelocalgreedy.go").unlink(), "no `const Name"),
        (lambda t: (t / "deployments/kai-scheduler/values.yaml").unlink(), "values.yaml: missing"),
    ],
)
def test_a_source_the_parser_does_not_know_is_a_one_line_error(tmp_path: Path, breakage, said: str) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    breakage(tree)
    done = _run("--tree", tree, "--as", "v0.17.1", "--out", tmp_path / "out")
    assert done.returncode == 1 and said in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_a_chart_before_plugin_defaults_gets_values_only(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "deployments" / "kai-scheduler").mkdir(parents=True)
    shutil.copy(DATA / "chart-values" / "v0.10.5.yaml", tree / "deployments" / "kai-scheduler" / "values.yaml")
    assert _run("--tree", tree, "--as", "v0.10.5", "--out", tmp_path / "out").returncode == 0
    assert [p.name for p in (tmp_path / "out").rglob("*") if p.is_file()] == ["v0.10.5.yaml"]


def test_every_shipped_shard_model_names_its_source_commit() -> None:
    for file in sorted((DATA / "shard-defaults").glob("*.json")):
        data = json.loads(file.read_text())
        assert data["version"] == file.stem and len(data["source"]["commit"]) == 40, file
        assert (DATA / "chart-values" / file.name.replace(".json", ".yaml")).is_file()
