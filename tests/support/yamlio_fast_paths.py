"""Shared helpers of tests/yamlio/test_fast_paths.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from reconciler.core.errors import UserError
from reconciler.yamlio.document import decode_text
from tests.support.helpers import ROOT, helm_template

CORPUS_DIRS = ("tests/fixtures", "repo-templates", "reconciler/data", "policies", "deploy")

# `kai-gitops init`'s CI templates: byte-for-byte copies of repo-templates/ci (tests/cli/test_cli_init.py), read there.
INIT_CI_COPIES = ROOT / "reconciler" / "data" / "init" / "ci"


def corpus() -> list[Path]:
    files = [
        p
        for d in CORPUS_DIRS
        for p in sorted((ROOT / d).rglob("*"))
        if p.suffix in (".yaml", ".yml") and not p.is_relative_to(INIT_CI_COPIES) and not helm_template(p)
    ]
    assert len(files) > 20, files
    return files


def typed(value: Any) -> Any:
    """Data with types and key order spelled out: True == 1 == 1.0 in Python, but not to Helm, and a dict's
    equality ignores the order its keys were read in; NaN equals itself here."""
    if isinstance(value, dict):
        return [(k, typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def corpus_texts() -> list[tuple[Path, str]]:
    """The corpus files as the readers get them, but for those refused before either runs (not UTF-8)."""
    texts = []
    for path in corpus():
        try:
            texts.append((path, decode_text(path.read_bytes(), path.name)))
        except UserError:
            continue
    return texts


SCALARS = [
    "yes",
    "no",
    "on",
    "Off",
    "y",
    "N",
    "true",
    "False",
    "~",
    "null",
    "",
    "010",
    "0o17",
    "0x1F",
    "0b11",
    "1_000",
    "1e3",
    "1.5",
    ".inf",
    "-.Inf",
    ".nan",
    "2024-01-01",
    "12345678901234567890",
    "-0",
    "+3",
    "'yes'",
    '"on"',
    "'1'",
    "plain text",
    "a:b",
    "=",
    "_",
    "0x_",
    "é",
    "x # c",
    "[1, yes]",
    "{k: on}",
    "'it''s'",
    '"\\t"',
    "&a yes",
    "*a",
    "!!str 1",
    "-1",
    "0",
    "007",
    "1_0",
    "0.",
    "-.5e3",
]

KEYS = ["a", "b", "yes", "on", "1", "'1'", "true", "~", "2.5", "010", "key x", '"q"', "é", "<<"]


def _block(draw: Any, depth: int, indent: int) -> str:
    pad = " " * indent
    kind = draw(st.sampled_from(["map", "seq", "flow"] if depth < 3 else ["flow"]))
    if kind == "flow":
        return " " + draw(st.sampled_from(SCALARS)) + "\n"
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        head = f"{pad}{draw(st.sampled_from(KEYS))}:" if kind == "map" else f"{pad}-"
        if draw(st.booleans()):
            lines.append(head + " " + draw(st.sampled_from(SCALARS)) + "\n")
        else:
            lines.append(head + "\n" + _block(draw, depth + 1, indent + 2).lstrip("\n"))
    text = "".join(lines)
    return "\n" + text if kind != "flow" else text


@st.composite
def documents(draw: Any) -> str:
    body = _block(draw, 0, 0).lstrip("\n")
    if body.startswith(" "):
        body = "value:" + body
    return body
