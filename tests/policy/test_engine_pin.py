"""The embedded Rego engine decides pass or fail: it is pinned exactly, to what is installed, and the docs say
what it is built from and how to use the reference engine instead."""

from __future__ import annotations

import tomllib
from importlib.metadata import version

from tests.support.helpers import ROOT

ENGINE = "celine-regorus"


def test_the_engine_is_pinned_exactly_to_the_installed_version() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    [pin] = [d for d in dependencies if d.startswith(ENGINE)]
    assert pin == f"{ENGINE}=={version(ENGINE)}"


def test_the_docs_say_what_the_engine_is_and_name_the_reference_engine() -> None:
    engines = (ROOT / "docs" / "policies.md").read_text().split("### The engines", 1)[1].split("\n## ", 1)[0]
    assert "microsoft/regorus" in engines and f"{ENGINE}=={version(ENGINE)}" in engines
    assert "--opa-url" in engines and "reference engine" in engines
