"""tools/ratchet.py on a planted tree: the counts, the failure line when one grows, `--update` only lowering."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "ratchet.py"

CLEAN = """\
from typing import Any
import typing


def typed(x: dict[str, Any], *args: int) -> list[Any]:
    return [x, args]
"""

GROWN = """\
from typing import Any
import typing


def typed(x: Any, *args: Any, **kwargs: "Any") -> typing.Any:
    import json

    def inner() -> None:
        import os
    return json
"""


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), "--root", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _plant(root: Path, **files: str) -> None:
    (root / "reconciler" / "sub").mkdir(parents=True, exist_ok=True)
    (root / "tools").mkdir(exist_ok=True)
    for name, text in files.items():
        (root / "reconciler" / "sub" / f"{name}.py").write_text(text)


def _counts(text: str) -> tuple[int, int]:
    spec = importlib.util.spec_from_file_location("tools_ratchet", SCRIPT)
    assert spec is not None and spec.loader is not None
    ratchet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ratchet)
    tree = ast.parse(text)
    return ratchet.bare_any_in_signatures(tree), ratchet.function_level_imports(tree)


def test_only_a_bare_any_and_imports_inside_functions_count() -> None:
    assert _counts(CLEAN) == (0, 0)
    # x, *args, **kwargs (a string annotation), the return as typing.Any; the nested import counted once.
    assert _counts(GROWN) == (4, 2)


def test_a_grown_count_fails_with_one_line_naming_it_and_the_file(tmp_path: Path) -> None:
    _plant(tmp_path, grows=CLEAN, steady=GROWN)
    assert _run(tmp_path, "--update").returncode == 0
    assert _run(tmp_path).returncode == 0

    _plant(tmp_path, grows=GROWN)
    result = _run(tmp_path)

    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("ratchet: bare Any in signatures under reconciler/ is 8, above the maximum 4 ")
    assert "(grew most: reconciler/sub/grows.py +4)" in lines[0]
    assert lines[1].startswith("ratchet: function-level imports under reconciler/ is 4, above the maximum 2 ")
    assert "Traceback" not in result.stderr


def test_update_lowers_the_maxima_and_never_raises_them(tmp_path: Path) -> None:
    _plant(tmp_path, a=GROWN)
    assert _run(tmp_path, "--update").returncode == 0
    recorded = (tmp_path / "tools" / "ratchet.json").read_text()

    _plant(tmp_path, b=GROWN)
    refused = _run(tmp_path, "--update")
    assert refused.returncode == 1
    assert "(--update only lowers)" in refused.stderr
    assert (tmp_path / "tools" / "ratchet.json").read_text() == recorded

    (tmp_path / "reconciler" / "sub" / "b.py").unlink()
    _plant(tmp_path, a=CLEAN)
    assert _run(tmp_path, "--update").returncode == 0
    _plant(tmp_path, a=GROWN)
    assert _run(tmp_path).returncode == 1


def test_bad_input_is_one_line_naming_the_file(tmp_path: Path) -> None:
    _plant(tmp_path, a=CLEAN)
    missing = _run(tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1 and "ratchet.json: missing" in missing.stderr

    (tmp_path / "tools" / "ratchet.json").write_text('{"bare-any-in-signatures": {"max": "x"}}')
    malformed = _run(tmp_path)
    assert malformed.returncode == 1
    assert malformed.stderr.count("\n") == 1 and 'no "bare-any-in-signatures"' in malformed.stderr

    _plant(tmp_path, broken="def f(:\n")
    unparsable = _run(tmp_path)
    assert unparsable.returncode == 1
    assert "reconciler/sub/broken.py:1: cannot parse" in unparsable.stderr
