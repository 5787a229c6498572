"""The test layout (docs/development.md#tests-and-what-the-test-doubles-do-not-model): tests live in folders by
subject, and what tests share lives in tests/support/, so no test module imports another."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _is_test_module(module: str) -> bool:
    last = module.rpartition(".")[2]
    return module.startswith("tests.") and (last.startswith("test_") or last == "conftest")


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_no_test_module_directly_under_tests() -> None:
    flat = sorted(path.name for path in TESTS.glob("test_*.py"))
    assert flat == [], f"put these in the folder of their subject (docs/development.md): {flat}"


def test_no_helper_module_outside_support() -> None:
    """Beside the tests only conftest.py and __init__.py: a helper module goes to tests/support/."""
    strays = sorted(
        str(path.relative_to(TESTS))
        for path in TESTS.glob("*/*.py")
        if path.parent.name != "support"
        and path.name not in ("conftest.py", "__init__.py")
        and not path.name.startswith("test_")
    )
    strays += sorted(
        path.name
        for path in TESTS.glob("*.py")
        if path.name not in ("conftest.py", "__init__.py") and not path.name.startswith("test_")
    )
    assert strays == [], f"move these helpers to tests/support/: {strays}"


def test_no_test_module_imports_another() -> None:
    """Helpers come only from tests/support/: importing a test module runs its tests' module code and
    couples two subjects' files."""
    offences = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offences += [
            f"{path.relative_to(TESTS.parent)}:{line}: {module}"
            for line, module in _imported_modules(tree)
            if _is_test_module(module)
        ]
    assert offences == [], "import these from tests/support/ instead:\n" + "\n".join(offences)


def test_the_rule_sees_an_import_of_a_test_module() -> None:
    planted = ast.parse("def f():\n    from tests.cli.test_cli_check import demo\n")
    assert [m for _, m in _imported_modules(planted) if _is_test_module(m)] == ["tests.cli.test_cli_check"]
