"""Control characters in values from the cluster or Git (core/printable.py): `-o text`, reconcile's plan, the
policy test report and every error line show a newline, ESC, a C1 control or a line separator as a visible
escape, so no value starts a line (`::error …` in a CI log) or a terminal sequence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import assert_one_line_error, load_demo_builder, run_cli

DEMO = load_demo_builder()
# a line of its own, a workflow command, an OSC title, a C1 CSI (clear screen), a Unicode line separator
HOSTILE = "fn\n::error file=x::pwned\x1b]0;owned\x07\x9b2J\u2028tail"
SHOWN = "fn\\n::error file=x::pwned\\x1b]0;owned\\x07\\x9b2J\\u2028tail"
RAW = ("\x1b", "\x07", "\x9b", "\u2028")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    DEMO.build_repo(target)
    return target


@pytest.fixture(scope="module")
def hostile_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo cluster, its Pending pod renamed: NVCA-P-003 names it and puts it in its kubectl command."""
    items: list[dict[str, Any]] = DEMO.prod_addon_snapshot()
    for item in items:
        if item["kind"] == "Pod" and item["metadata"]["name"] == "fn-llama-1":
            item["metadata"]["name"] = HOSTILE
        if item["kind"] == "Event" and item["involvedObject"]["name"] == "fn-llama-1":
            item["involvedObject"]["name"] = HOSTILE
    path = tmp_path_factory.mktemp("snap") / "hostile.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def assert_printable(output: str) -> None:
    assert SHOWN in output, output
    assert not any(char in output for char in RAW), output
    assert not any(line.startswith("::error file=x") for line in output.split("\n"))


def test_text_report_shows_control_characters_as_escapes(demo: Path, hostile_snapshot: Path) -> None:
    code, stdout, stderr = run_cli(["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", hostile_snapshot])
    assert code == 2, stderr
    assert_printable(stdout)


def test_github_output_lets_no_value_start_a_line(demo: Path, hostile_snapshot: Path) -> None:
    code, stdout, stderr = run_cli(
        ["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", hostile_snapshot, "-o", "github"]
    )
    assert code == 2, stderr
    assert "pwned" in stdout
    assert not any(line.startswith("::error file=x") for line in stdout.split("\n"))
    assert not any(char in stdout for char in "\x1b\x07\x9b\u2028"), stdout  # no escape sequence reaches the log


def test_reconcile_plan_text_shows_control_characters_as_escapes(demo: Path, hostile_snapshot: Path) -> None:
    code, stdout, stderr = run_cli(
        ["reconcile", "--repo", demo, "--cluster", "prod-addon", "--snapshot", hostile_snapshot]
    )
    assert code == 2, stderr
    assert f"! operator NVCA-P-003 Pod/nvcf-backend/{SHOWN}" in stdout
    assert_printable(stdout)


def test_error_line_shows_control_characters_as_escapes(demo: Path) -> None:
    line = assert_one_line_error(
        *run_cli(["check", "--repo", demo, "--cluster", "a\x1b]0;owned\x07\x9b2Jb"]),
        "no cluster named 'a\\x1b]0;owned\\x07\\x9b2Jb'",
    )
    assert not any(char in line for char in RAW)


def test_json_error_line_shows_control_characters_as_escapes(demo: Path) -> None:
    code, _, stderr = run_cli(["check", "--repo", demo, "--cluster", "a\x1b[31mb", "--log-format", "json"])
    errors = [json.loads(line) for line in stderr.splitlines() if '"run-error"' in line]
    assert code == 1 and len(errors) == 1
    assert "no cluster named 'a\\x1b[31mb'" in errors[0]["message"], errors[0]


def test_usage_error_line_shows_control_characters_as_escapes(demo: Path) -> None:
    line = assert_one_line_error(
        *run_cli(["check", "--repo", demo, "-o", "x\x1b]0;owned\x07"]), "unknown output format 'x\\x1b]0;owned\\x07'"
    )
    assert not any(char in line for char in RAW)


def test_policy_test_report_shows_control_characters_as_escapes() -> None:
    from reconciler.checks.policy.testing import PolicyTestResult, TestReport, format_report

    failed = PolicyTestResult(
        "policies/q\x1b]0;owned\x07_test.rego", "kai_gitops.q", "test_x", False, "rego error\x9b2J"
    )
    text = format_report(TestReport((failed,)))
    assert "FAIL policies/q\\x1b]0;owned\\x07_test.rego: data.kai_gitops.q.test_x (rego error\\x9b2J)" in text
    assert not any(char in text for char in RAW)


def test_the_written_file_line_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    target = tmp_path / "bundle\x1b]0;owned\x07.tar.gz"
    code, _out, err = run_cli(["policy", "bundle", "-o", str(target)])
    assert code == 0 and target.exists(), err
    assert "bundle\\x1b]0;owned\\x07.tar.gz" in err and "\x1b" not in err and "\x07" not in err, err


# Trojan Source (CVE-2021-42574): invisible controls that reorder what follows, so "fn-llama\u202e1-cod" reads
# as another name. Every text and Markdown output shows them as escapes.
BIDI = "fn-\u202eevil\u202c-\u2066x\u2069-\u200e\u200f"
BIDI_SHOWN = "fn-\\u202eevil\\u202c-\\u2066x\\u2069-\\u200e\\u200f"
BIDI_RAW = ("\u202e", "\u202c", "\u2066", "\u2069", "\u200e", "\u200f")


@pytest.fixture(scope="module")
def bidi_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    items: list[dict[str, Any]] = DEMO.prod_addon_snapshot()
    for item in items:
        if item["kind"] == "Pod" and item["metadata"]["name"] == "fn-llama-1":
            item["metadata"]["name"] = BIDI
        if item["kind"] == "Event" and item["involvedObject"]["name"] == "fn-llama-1":
            item["involvedObject"]["name"] = BIDI
    path = tmp_path_factory.mktemp("snap") / "bidi.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


@pytest.mark.parametrize("fmt", ["text", "markdown", "github"])
def test_bidirectional_controls_in_names_are_escapes(demo: Path, bidi_snapshot: Path, fmt: str) -> None:
    code, stdout, stderr = run_cli(
        ["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", bidi_snapshot, "-o", fmt]
    )
    assert code == 2, stderr
    shown = BIDI_SHOWN.replace("\\", "\\\\") if fmt == "markdown" else BIDI_SHOWN  # Markdown escapes a backslash
    assert shown in stdout, stdout
    assert not any(char in stdout for char in BIDI_RAW), stdout


def test_bidirectional_controls_in_an_error_line_are_escapes(demo: Path) -> None:
    line = assert_one_line_error(*run_cli(["check", "--repo", demo, "-o", f"x{BIDI}"]), BIDI_SHOWN)
    assert not any(char in line for char in BIDI_RAW)


def test_markdown_code_shows_bidirectional_controls_as_escapes() -> None:
    """A drift issue's plan and a fix PR's diff are code blocks, commands code spans: both render the text as it
    is, so the escape happens before."""
    from reconciler.outputs.markdown_format import code_block, escape_markdown, inline_code

    for text in (code_block(f"+  parentQueue: {BIDI}\n-\tx", "diff"), inline_code(BIDI), escape_markdown(BIDI)):
        assert "u202e" in text and not any(char in text for char in BIDI_RAW), text
    assert "\n-\tx\n" in code_block(f"+ {BIDI}\n-\tx")  # a block's own lines and tabs stay


def test_markdown_fix_commands_let_no_name_start_a_line(demo: Path, hostile_snapshot: Path) -> None:
    """The PR comment printed into a CI log: a name with a line break inside a fix command stays on its line."""
    code, stdout, stderr = run_cli(
        ["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", hostile_snapshot, "-o", "markdown"]
    )
    assert code == 2, stderr
    assert "pwned" in stdout
    assert not any(line.lstrip().startswith("::error file=x") for line in stdout.split("\n")), stdout
