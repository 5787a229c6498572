"""The `acyclic` import contract (pyproject.toml) catches the cycles a lazy or TYPE_CHECKING import hides.

`make contracts` holds reconciler/ to it; here it runs, as written there, on a planted package: a cycle between
two modules through a function-level import, one through a TYPE_CHECKING import, and one between two
subpackages, each must break it, and the same package without them must keep it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

HEAD = "from __future__ import annotations\n"
USES_LOW = HEAD + "from planted.low import Thing\n"


def _lazy(module: str) -> str:
    return HEAD + f"def use() -> object:\n    from planted import {module}\n    return {module}\n"


def _type_only(module: str) -> str:
    return HEAD + f"from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from planted import {module}\n"


def _acyclic_contract() -> dict[str, object]:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = (c for c in contracts if c["type"] == "acyclic_siblings")
    assert contract["ancestors"] == ["reconciler"]
    return {**contract, "ancestors": ["planted"]}


def _config(contract: dict[str, object]) -> str:
    """TOML for the planted package; the contract's values are strings and lists of strings, which JSON spells."""
    fields = "".join(f"{key} = {json.dumps(value)}\n" for key, value in contract.items())
    return f'[tool.importlinter]\nroot_package = "planted"\n\n[[tool.importlinter.contracts]]\n{fields}'


def _lint(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    for name, text in {"__init__.py": "", "low.py": HEAD + "class Thing: ...\n", **files}.items():
        path = tmp_path / "planted" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "pyproject.toml").write_text(_config(_acyclic_contract()))
    command = [str(LINT_IMPORTS), "--no-cache", "--no-logo"]
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)


def test_an_acyclic_package_keeps_the_contract(tmp_path: Path) -> None:
    result = _lint(tmp_path, {"high.py": USES_LOW, "mid.py": _lazy("low"), "typed.py": _type_only("low")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"high.py": USES_LOW, "low.py": _lazy("high")}, id="function-level import"),
        pytest.param({"high.py": USES_LOW, "low.py": _type_only("high")}, id="TYPE_CHECKING import"),
        pytest.param(
            {
                "left/__init__.py": "",
                "left/inner.py": HEAD + "from planted.right import deep\n",
                "right/__init__.py": "",
                "right/deep.py": _lazy("left"),
            },
            id="between subpackages",
        ),
    ],
)
def test_a_hidden_cycle_breaks_the_contract(tmp_path: Path, files: dict[str, str]) -> None:
    result = _lint(tmp_path, files)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 kept, 1 broken" in result.stdout
