"""Bad input as a person and a CI reviewer meet it: one line naming file:line:column and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import assert_one_line_error, make_repo, run_cli, template_files

QUEUES = "clusters/lab/queues.yaml"
TAB_LINE = "clusters/lab/queues.yaml:9:1: invalid YAML: tabs are not allowed for indentation (indent with spaces)"


@pytest.fixture
def tab_repo(tmp_path: Path) -> Path:
    files = template_files((QUEUES, "    cpu:", "\tcpu:"))
    assert files[QUEUES] is not None and files[QUEUES].split("\n")[8].startswith("\tcpu:")
    return make_repo(tmp_path, files)[0]


def test_a_tab_is_one_line_saying_where_and_to_indent_with_spaces(tab_repo: Path) -> None:
    line = assert_one_line_error(*run_cli(["check", "--repo", tab_repo]), TAB_LINE)
    assert "cannot start any token" not in line and "while scanning" not in line
