"""The tables the docs keep of the code (the pack's rules, the built-in rules, the output formats) are what
`tools/docs_tables.py` generates from it now: after adding a rule or a format, run it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.helpers import ROOT

GENERATOR = ROOT / "tools" / "docs_tables.py"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_tables", GENERATOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_tables"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_every_generated_table_is_fresh() -> None:
    done = subprocess.run([sys.executable, GENERATOR, "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_stale_table_is_named_and_rewritten_between_its_markers_only(
    generator: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "page.md"
    table = generator.Table("formats", page, generator.output_formats)
    begin, end = table.markers()
    page.write_text(f"# Before\n\n{begin}\n| format |\n| `text` |\n{end}\n\nAfter.\n")
    monkeypatch.setattr(generator, "TABLES", (table,))
    assert generator.main(["--check"]) == 1
    assert page.read_text().count("`text`") == 1  # --check writes nothing
    assert generator.main([]) == 0 and generator.main(["--check"]) == 0
    text = page.read_text()
    assert text.startswith(f"# Before\n\n{begin}\n| format |") and text.endswith(f"{end}\n\nAfter.\n")
    assert "[`markdown`](#markdown)" in text


def test_the_tables_list_every_entry_of_the_code(generator: ModuleType) -> None:
    from reconciler.findings.builtin_rules import BY_ID
    from reconciler.outputs import FORMATS

    assert all(f"| `{rule}` |" in generator.builtin_rules() for rule in BY_ID)
    assert all(f"| [`{name}`](#{name}) |" in generator.output_formats() for name in FORMATS)
    assert "| KAI-Q-020 | error | static |" in generator.pack_rules()  # its meta's scope, not a hand copy's
