"""The extension points' tables (output formats, report targets, commands) in one idiom: every entry names code
that exists and has the entry's type, mypy sees each named function bound to its protocol, and nothing is
imported before it is used."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from reconciler.cli import COMMANDS
from reconciler.core.lazy import LazyRef
from reconciler.outputs import FORMATS
from reconciler.publish.targets import TARGETS
from tests.support.helpers import ROOT

PACKAGE = ROOT / "reconciler"


def refs_of(entry: object) -> Iterator[LazyRef[object]]:
    yield from (value for value in vars(entry).values() if isinstance(value, LazyRef))


def type_checking_bindings(path: Path) -> set[str]:
    """`module:attribute` of every `module.attribute` bound under the file's `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text())
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    found: set[str] = set()
    for block in (node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
        imported = {
            alias.asname or alias.name: f"{node.module}.{alias.name}"
            for node in block.body
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        for node in ast.walk(block):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
                found.add(f"{imported[node.value.id]}:{node.attr}")
    assert found, f"{path}: no TYPE_CHECKING bindings ({package})"
    return found


@pytest.mark.parametrize(
    ("table", "path"), [(FORMATS, PACKAGE / "outputs" / "__init__.py"), (TARGETS, PACKAGE / "publish" / "targets.py")]
)
def test_mypy_sees_every_function_a_table_names(table: dict[str, object], path: Path) -> None:
    named = {ref.target for entry in table.values() for ref in refs_of(entry)}
    assert named == type_checking_bindings(path)


def test_every_format_entry_loads_and_its_capabilities_are_its_modules() -> None:
    for name, entry in FORMATS.items():
        assert entry.name == name and entry.summary
        render = entry.render.load()
        assert "color" in inspect.signature(render).parameters, name
        module = sys.modules[entry.render.module]
        # the error form is named by the entry exactly when the format's module has one
        assert (entry.render_error is not None) == hasattr(module, "render_error"), name
        for ref in (entry.render_error, entry.render_run, entry.guard_stdout):
            assert ref is None or callable(ref.load()), (name, ref)
    modules = {p.stem for p in (PACKAGE / "outputs").glob("*_format.py")}
    assert modules == {FORMATS[name].render.module.rsplit(".", 1)[1] for name in FORMATS}


def test_every_target_and_command_loads_with_its_type() -> None:
    for name, target in TARGETS.items():
        assert target.name == name and target.summary
        assert list(inspect.signature(target.publish.load()).parameters) == ["request"], name
    for name, command in COMMANDS.items():
        loaded = command.load()
        assert isinstance(loaded, click.Command) and loaded.name == name


def test_the_tables_import_nothing_they_name() -> None:
    """The CLI's start-up reads the tables (the -o and --report-to help); no format, target or command module is
    imported until it is used."""
    named = {ref.module for table in (FORMATS, TARGETS, COMMANDS) for entry in table.values() for ref in refs_of(entry)}
    code = "import sys, reconciler.cli.options, reconciler.outputs.destinations; print('\\n'.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert named & loaded == set()


def test_a_lazy_ref_names_a_module_or_an_attribute() -> None:
    assert LazyRef[object]("reconciler.outputs.json_format").load() is sys.modules["reconciler.outputs.json_format"]
    assert LazyRef[object]("reconciler.outputs:FORMATS").load() is FORMATS
    with pytest.raises(AttributeError):
        LazyRef[object]("reconciler.outputs:NO_SUCH").load()
