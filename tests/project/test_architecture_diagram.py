"""docs/architecture.md's rooms diagram (tools/rooms_diagram.py): written from the layers contract, each flow up
the contract's order and along a real import, and the page holding what the tool writes today."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import grimp
import pytest

from tests.support.helpers import ROOT


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    """tools/rooms_diagram.py, imported from its path (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("kai_gitops_rooms_diagram", ROOT / "tools" / "rooms_diagram.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def layers(tool: ModuleType) -> list[list[str]]:
    found: list[list[str]] = tool.contract_layers(ROOT / "pyproject.toml")
    return found


def test_the_page_holds_the_diagram_the_tool_writes(tool: ModuleType, layers: list[list[str]]) -> None:
    page = (ROOT / tool.PAGE).read_text()
    assert tool.rewritten(page, layers) == page, "stale: run python tools/rooms_diagram.py"


def test_every_room_of_the_contract_is_drawn_on_its_row(tool: ModuleType, layers: list[list[str]]) -> None:
    drawn = tool.mermaid(layers)
    for i, line in enumerate(layers):
        row = drawn[drawn.index(f"subgraph layer{i} ") :]
        row = row[: row.index("  end")]
        assert sorted(r for r in _rooms_in(row)) == sorted(line)
    assert {room for line in layers for room in line} == {f.source for f in tool.FLOW} | {f.taker for f in tool.FLOW}


def _rooms_in(row: str) -> Iterator[str]:
    for line in row.splitlines():
        name, bracket, _ = line.strip().partition('["')
        if bracket and not name.startswith("subgraph"):
            yield name


def test_the_flows_go_up_the_contract_and_a_flow_down_is_refused(tool: ModuleType, layers: list[list[str]]) -> None:
    assert tool.flow_errors(layers) == []
    down = tool.Flow("report", "checks", "a finding handed down")
    assert tool.flow_errors(layers, (down,)) == ["report -> checks: checks is not above report in the layers contract"]
    assert tool.flow_errors(layers, (tool.Flow("cli", "attic", "x"),)) == [
        "cli -> attic: no room 'attic' in the layers contract"
    ]


def test_each_room_takes_its_data_from_a_room_it_imports(tool: ModuleType) -> None:
    graph = grimp.build_graph("reconciler")

    def imports(taker: str, source: str) -> bool:
        modules = {f"reconciler.{taker}", *graph.find_descendants(f"reconciler.{taker}")}
        return any(
            imported == f"reconciler.{source}" or imported.startswith(f"reconciler.{source}.")
            for module in modules
            for imported in graph.find_modules_directly_imported_by(module)
        )

    assert [f for f in tool.FLOW if not imports(f.taker, f.source)] == []


def test_check_mode_says_stale_and_exits_1(
    tool: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    page = (ROOT / tool.PAGE).read_text().replace('"Report"', '"a report"', 1)
    (tmp_path / tool.PAGE).write_text(page)
    monkeypatch.setattr(tool, "REPO", tmp_path)
    assert tool.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert tool.main([]) == 0 and tool.main(["--check"]) == 0
