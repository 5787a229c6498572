#!/usr/bin/env python3
"""Counts that may only go down: bare `Any` in signatures and function-level imports under reconciler/.

A bare `Any` is a parameter or return annotation that is `Any` itself (`x: Any`, `-> Any`, `**kw: Any`), not
`Any` inside another type: it switches checking off for the whole value, where a JSON alias from
reconciler/core/jsonvalue.py or a Protocol would keep it on. A function-level import is an `import` inside a
function body (at any depth): it hides a dependency from the module's head and often a cycle or a slow import.

The maxima, and each file's count when they were last lowered, are in tools/ratchet.json. The check fails
(exit 1) with one line per count above its maximum, naming the files that grew most against that record;
`--update` lowers the maxima to today's counts and never raises them (raising one is an edit to the file that
a reviewer sees). Standard library only, so `make check` needs nothing installed.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "reconciler"
MAXIMA = "tools/ratchet.json"
SHOWN_FILES = 3


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _is_bare_any(annotation: ast.expr | None) -> bool:
    match annotation:
        case ast.Name(id="Any") | ast.Attribute(attr="Any", value=ast.Name(id="typing")):
            return True
        case ast.Constant(value="Any"):
            return True
    return False


def bare_any_in_signatures(tree: ast.AST) -> int:
    count = 0
    for function in _functions(tree):
        args = function.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        annotations = [p.annotation for p in params if p is not None] + [function.returns]
        count += sum(_is_bare_any(a) for a in annotations)
    return count


def function_level_imports(tree: ast.AST) -> int:
    """Each import statement once, however deeply its function is nested."""
    inside: set[int] = set()
    for function in _functions(tree):
        inside.update(id(node) for node in ast.walk(function) if isinstance(node, ast.Import | ast.ImportFrom))
    return len(inside)


COUNTERS: dict[str, tuple[str, Callable[[ast.AST], int]]] = {
    "bare-any-in-signatures": ("bare Any in signatures", bare_any_in_signatures),
    "function-level-imports": ("function-level imports", function_level_imports),
}


class RatchetError(Exception):
    """Input the script cannot use; its message is the one line printed."""


def count_tree(root: Path) -> dict[str, dict[str, int]]:
    """Per counter, per file (relative to root, '/'-separated), the non-zero counts."""
    counts: dict[str, dict[str, int]] = {key: {} for key in COUNTERS}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        name = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=name)
        except SyntaxError as exc:
            raise RatchetError(f"{name}:{exc.lineno}: cannot parse ({exc.msg}); fix the syntax first") from None
        for key, (_, counter) in COUNTERS.items():
            if found := counter(tree):
                counts[key][name] = found
    return counts


class Record(NamedTuple):
    """One counter's maximum and each file's count when it was recorded."""

    maximum: int
    files: dict[str, int]


def _record(entry: object) -> Record | None:
    if not isinstance(entry, dict):
        return None
    maximum, files = entry.get("max"), entry.get("files")
    if not (isinstance(maximum, int) and isinstance(files, dict)):
        return None
    if not all(isinstance(name, str) and isinstance(n, int) for name, n in files.items()):
        return None
    return Record(maximum, dict(files))


def read_maxima(path: Path) -> dict[str, Record]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RatchetError(f"{path}: missing; create it with `python tools/ratchet.py --update`") from None
    except json.JSONDecodeError as exc:
        raise RatchetError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    records = {}
    for key in COUNTERS:
        record = _record(document.get(key)) if isinstance(document, dict) else None
        if record is None:
            raise RatchetError(f'{path}: no "{key}" with an integer "max" and "files" counts; see tools/ratchet.py')
        records[key] = record
    return records


def _grew_most(now: dict[str, int], then: dict[str, int]) -> str:
    grown = sorted((then.get(name, 0) - n, name) for name, n in now.items() if n > then.get(name, 0))
    return ", ".join(f"{name} +{-delta}" for delta, name in grown[:SHOWN_FILES]) or "no single file"


def check(counts: dict[str, dict[str, int]], maxima: dict[str, Record]) -> list[str]:
    """One line per count above its maximum; empty when every count holds."""
    failures = []
    for key, (label, _) in COUNTERS.items():
        total, record = sum(counts[key].values()), maxima[key]
        if total > record.maximum:
            failures.append(
                f"{label} under {PACKAGE}/ is {total}, above the maximum {record.maximum} "
                f"(grew most: {_grew_most(counts[key], record.files)}); remove the new ones, "
                f"or raise the maximum in {MAXIMA} in a reviewed change"
            )
    return failures


def update(counts: dict[str, dict[str, int]], maxima: dict[str, Record] | None) -> dict[str, object]:
    """Today's counts as the new maxima; a count above its maximum is refused, never recorded."""
    if maxima is not None and (failures := check(counts, maxima)):
        raise RatchetError(failures[0] + " (--update only lowers)")
    return {key: {"max": sum(counts[key].values()), "files": counts[key]} for key in COUNTERS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=REPO, help="the tree holding reconciler/ (default: this repo)")
    parser.add_argument("--maxima", type=Path, help=f"the record of maxima (default: ROOT/{MAXIMA})")
    parser.add_argument("--update", action="store_true", help="lower the maxima to today's counts")
    options = parser.parse_args(argv)
    maxima_path = options.maxima or options.root / MAXIMA
    try:
        counts = count_tree(options.root)
        if options.update:
            previous = read_maxima(maxima_path) if maxima_path.exists() else None
            maxima_path.write_text(json.dumps(update(counts, previous), indent=2, sort_keys=True) + "\n")
            summary = ", ".join(f"{label} {sum(counts[key].values())}" for key, (label, _) in COUNTERS.items())
            print(f"ratchet: recorded {summary} in {maxima_path}")
            return 0
        failures = check(counts, read_maxima(maxima_path))
    except RatchetError as exc:
        print(f"ratchet: {exc}", file=sys.stderr)
        return 1
    for line in failures:
        print(f"ratchet: {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
