"""Input size bounds memory and time: YAML values per file, answer bytes, list pages, message length, Rego budget."""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import os
import re
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconciler.outputs import FORMATS
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    assert_one_line_error,
    kai_crds,
    make_repo,
    run_cli,
    snapshot_file,
    standalone_config,
)

# -- YAML values per file -------------------------------------------------------------------------------------


def _flow_list_bomb(values: int) -> str:
    """Two bytes a value: within the 20 MB cap such a list is 10 million values (~40 s, ~6 GB before the budget)."""
    return CANONICAL_KAI_VALUES + "\nbomb: [" + "a," * values + "a]\n"


@pytest.mark.parametrize("reader", ["libyaml", "ruamel"])
@pytest.mark.parametrize("tail", ["", "# a tab sends the file to ruamel:\t\n"])
def test_a_flow_list_bomb_in_git_is_one_line_naming_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, tail: str
) -> None:
    from reconciler.yamlio import document

    monkeypatch.setattr(document, "MAX_NODES", 5_000)  # the real budget, 500,000, costs ~2 s to reach
    monkeypatch.setenv("KAI_GITOPS_YAML_READER", reader)
    values = _flow_list_bomb(5_010) + tail
    line = values[: values.index("bomb:")].count("\n") + 1
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, f"kai-values.yaml:{line}", "more than 5,000 YAML values")


def test_the_ruamel_reader_counts_values_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text libyaml cannot parse has no first pass: ruamel's composer stops it, naming the line."""
    from reconciler.core.errors import UserError
    from reconciler.yamlio.document import ruamel_documents

    with pytest.raises(UserError) as caught:
        ruamel_documents("a: 1\nb:\n" + "  - x\n" * 50, "f.yaml", max_nodes=20)
    assert caught.value.where == "f.yaml:18"  # the 21st value: the 16th item


def test_a_snapshot_past_its_value_budget_is_refused_naming_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reconciler.sources import snapshot

    snap = snapshot_file(tmp_path, kai_crds())
    monkeypatch.setattr(snapshot, "SNAPSHOT_MAX_NODES", 20)
    code, stdout, stderr = run_cli(["doctor", "--snapshot", snap])
    assert_one_line_error(code, stdout, stderr, "snapshot.yaml:", "more than 20 YAML values", "FILE.json")


# -- answers from the cluster: bytes after decompression, pages per list ---------------------------------------


def _live(server: Any, settings: Any) -> Any:
    from reconciler.sources.cluster import read_cluster
    from tests.support.cluster_source import client_for

    client = client_for(server, settings)
    try:
        return read_cluster(client)
    finally:
        client.close()


def test_a_gzip_bomb_from_nvca_healthz_stops_at_the_byte_cap() -> None:
    """A 16 KB gzip answer inflating to 16 MB (one seen was 6 GB): read no further than the cap."""
    from reconciler.sources.cluster import ReadProgress
    from reconciler.sources.cluster.reads import Reader
    from tests.support.cluster_source import FAST, client_for
    from tests.support.kubeserver import KubeTestServer

    bomb = gzip.compress(b'{"Status": "' + b" " * (16 << 20) + b'"}', compresslevel=9)
    assert len(bomb) < 32 << 10
    with KubeTestServer() as server:
        server.set_healthz(200, bomb, headers={"Content-Encoding": "gzip"})
        client = client_for(server, dataclasses.replace(FAST, healthz_max_bytes=64 << 10, healthz_timeout_s=5.0))
        reader = Reader(client, ReadProgress("test", enabled=False))
        tracemalloc.start()
        try:
            [item] = reader.healthz()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            client.close()
    assert item["reachable"] is False
    assert "larger than 65,536 bytes (decompressed)" in item["detail"], item["detail"]
    assert peak < 4 << 20, peak  # never the 16 MB the answer inflates to


def test_a_list_answer_past_the_byte_cap_is_one_line_naming_the_resource(tmp_path: Path) -> None:
    from tests.support.cluster_source import prod_items, run_cli, serve, write_kubeconfig
    from tests.support.kubeserver import KubeTestServer

    with KubeTestServer() as server:
        serve(server, prod_items())
        kubeconfig = write_kubeconfig(tmp_path / "kc", {"prod": server.url}, current="prod")
        result = run_cli(["doctor", "--kubeconfig", str(kubeconfig)], env={"KAI_GITOPS_KUBE_ANSWER_MAX_BYTES": "300"})
    line = assert_one_line_error(
        result.exit_code,
        result.stdout,
        result.stderr,
        "larger than 300 bytes (decompressed)",
        "$KAI_GITOPS_KUBE_ANSWER_MAX_BYTES",
    )
    assert line.startswith("kai-gitops: error: reading ")


def test_read_capped_inflates_gzip_and_stops_past_the_cap() -> None:
    from reconciler.core.capped import read_capped

    body = b'{"items": []}' * 1000
    packed = gzip.compress(body)
    chunks = [packed[i : i + 100] for i in range(0, len(packed), 100)]
    assert read_capped(chunks, "gzip", len(body)) == body
    assert read_capped(chunks, "gzip", len(body) - 1) is None
    assert read_capped([body], "", len(body)) == body
    assert read_capped([body], "", len(body) - 1) is None


@pytest.mark.parametrize(
    ("token", "needle"),
    [
        (lambda: "again", "repeated a continue token after 2 pages"),
        (itertools.count().__next__, "did not end after 5 pages"),
    ],
)
def test_a_list_that_never_ends_is_one_error_naming_the_resource(token: Callable[[], object], needle: str) -> None:
    from reconciler.core.errors import UserError
    from tests.support.cluster_source import FAST, prod_items, serve
    from tests.support.kubeserver import Fault, KubeTestServer

    with KubeTestServer() as server:
        serve(server, prod_items())
        server.inject_fault(Fault(r"^/api/v1/nodes$", continue_token=lambda: f"t{token()}", times=-1))
        started = time.monotonic()
        with pytest.raises(UserError) as caught:
            _live(server, dataclasses.replace(FAST, list_max_objects=10))  # 5 pages of 2
    assert time.monotonic() - started < 5
    where = r"reading nodes from context test at http://127\.0\.0\.1:\d+ "
    assert re.match(where + r"\(GET /api/v1/nodes\?limit=2&continue=…\): ", caught.value.message)
    assert needle in caught.value.message
    assert "KAI_GITOPS_KUBE_LIST_MAX_OBJECTS" in (caught.value.hint or "")


def test_a_list_past_its_time_budget_is_one_error_naming_the_resource() -> None:
    from reconciler.core.errors import UserError
    from tests.support.cluster_source import FAST, prod_items, serve
    from tests.support.kubeserver import Fault, KubeTestServer

    fresh = itertools.count()
    with KubeTestServer() as server:
        serve(server, prod_items())
        server.inject_fault(Fault(r"^/api/v1/nodes$", continue_token=lambda: f"t{next(fresh)}", delay_s=0.05, times=-1))
        with pytest.raises(UserError) as caught:
            _live(server, dataclasses.replace(FAST, list_budget_s=0.3))
    assert "reading nodes from context test" in caught.value.message
    assert "did not end within 0.3 s" in caught.value.message


def test_a_long_list_still_reads_whole() -> None:
    """1,000 pages of one pod each: far more than any budget test uses, all within the default bounds."""
    from tests.support.cluster_source import FAST, prod_items, serve
    from tests.support.helpers import pod
    from tests.support.kubeserver import KubeTestServer

    with KubeTestServer() as server:
        serve(server, prod_items())
        server.add_many([pod(f"p{i:04d}", "kai-scheduler", scheduler="default-scheduler") for i in range(1000)])
        live = _live(server, dataclasses.replace(FAST, page_limit=1, list_max_objects=1000 + 100))
    assert len(live.kai_pods) >= 1000


# -- free text in every format ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def huge_healthz_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's prod cluster whose NVCA reports a 3 MB error: NVCA-H-003 quotes NVCA's errors in its message."""
    from tests.support.helpers import load_demo_builder

    items = load_demo_builder().prod_addon_snapshot()
    for item in items:
        if item["kind"] == "NVCAHealthz":
            item["body"]["Components"]["kai-scheduler-queues"]["Errors"].append("E" * (3 << 20))
    return snapshot_file(tmp_path_factory.mktemp("huge"), items, fmt="json")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_multi_megabyte_healthz_error_is_truncated_in_every_format(huge_healthz_snapshot: Path, fmt: str) -> None:
    code, stdout, stderr = run_cli(
        ["doctor", "--snapshot", huge_healthz_snapshot, "-o", fmt], env={"GITHUB_STEP_SUMMARY": ""}
    )
    assert code == 2, stderr
    assert len(stdout) < 256 << 10, len(stdout)
    assert "truncated, 3,1" in stdout, stdout[:2000]  # 3 MB less what was kept: 3,1xx,xxx bytes cut


def test_truncation_is_marked_bounded_and_stable() -> None:
    from reconciler.core.show import truncate_text

    text = "é" * 10_000
    cut = truncate_text(text, 100)
    assert len(cut) <= 100 and cut.startswith("é" * 50)
    assert cut.endswith(f"… [truncated, {2 * (10_000 - cut.index('…')):,} bytes]")
    assert truncate_text(cut, 100) == cut
    assert truncate_text("short", 100) == "short"


# -- the Rego of a pull request's own policies ------------------------------------------------------------------

_RULE_HEAD = """package kai_gitops.rules.user.acme.slow

meta := {
	"id": "ACME-S-001", "title": "t", "severity": "warning", "scope": "static",
	"rationale": "r", "remediation": "m", "source": "s",
}

"""
# 10^12 iterations: hours, in constant memory
_ENDLESS = (
    _RULE_HEAD
    + """violations contains v if {
	n := count([1 | some i in numbers.range(1, 1000000); some j in numbers.range(1, 1000000)])
	v := {"message": sprintf("%d", [n]), "subject": null, "doc": null, "path": null, "fix": null}
}
"""
)
# a billion numbers held at once: tens of gigabytes
_GREEDY = (
    _RULE_HEAD
    + """violations contains v if {
	n := count(numbers.range(1, 1000000000))
	v := {"message": sprintf("%d", [n]), "subject": null, "doc": null, "path": null, "fix": null}
}
"""
)
# `meta` is Rego too: read in the budgeted child as well
_ENDLESS_META = (
    _RULE_HEAD.replace(
        '"id": "ACME-S-001"',
        '"id": sprintf("ACME-S-%d", [count([1 | some i in '
        "numbers.range(1, 1000000); some j in numbers.range(1, 1000000)])])",
    )
    + "violations := set()\n"
)
_POLICY_CONFIG = ("kai-gitops.yaml", "waiversFile:", "policies:\n  dirs: [policy]\nwaiversFile:")


_QUICK = _RULE_HEAD + "violations := set()\n"


def _policy_repo(tmp_path: Path, rego: str) -> tuple[Path, str]:
    """The base has a quick rule; the pull request changes it into `rego`."""
    from tests.support.helpers import template_files

    first = template_files(_POLICY_CONFIG, **{"policy__acme__slow_rule__slow.rego": _QUICK})
    repo, (base, _) = make_repo(tmp_path, first, [{"policy/acme/slow_rule/slow.rego": rego}])
    return repo, base


@pytest.mark.parametrize(
    ("rego", "flag", "needle"),
    [
        (
            _ENDLESS,
            "--policy-timeout",
            "evaluating the policies for cluster prod-addon exceeded its time budget of 1 s",
        ),
        (_GREEDY, "--policy-memory", "exceeded its memory budget of 200 MB"),
        (_ENDLESS_META, "--policy-timeout", "reading the policies' meta exceeded its time budget of 1 s"),
    ],
)
def test_a_pull_requests_own_rego_runs_within_a_budget(tmp_path: Path, rego: str, flag: str, needle: str) -> None:
    repo, _ = _policy_repo(tmp_path, rego)
    started = time.monotonic()
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--policy-timeout", "1", "--policy-memory", "200"])
    assert time.monotonic() - started < 15
    assert_one_line_error(code, stdout, stderr, "policy/acme/slow_rule/slow.rego", needle, flag)


def test_the_base_rules_are_not_budgeted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --base the rules are the reviewed ones: evaluated in process, whatever the pull request adds."""

    def refuse() -> int:
        raise AssertionError("the trusted path forked")

    monkeypatch.setattr(os, "fork", refuse)
    repo, base = _policy_repo(tmp_path, _ENDLESS)
    code, _, stderr = run_cli(["check", "--repo", repo, "--base", base, "-o", "json"])
    assert code in (0, 2), stderr


# -- YAML nesting depth ---------------------------------------------------------------------------------------


def _nested_blocks(levels: int) -> str:
    return "".join("  " * i + f"k{i}:\n" for i in range(levels)) + "  " * levels + "v\n"


@pytest.mark.parametrize("reader", ["libyaml", "ruamel"])
@pytest.mark.parametrize(
    ("bomb", "line"),
    [
        (_nested_blocks(3_000), 101),  # valid YAML, 3,000 mappings deep
        ("deep: " + "[" * 100_000 + "]" * 100_000 + "\n", 1),
    ],
)
def test_yaml_nested_too_deep_is_one_line_naming_file_line_and_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, bomb: str, line: int
) -> None:
    monkeypatch.setenv("KAI_GITOPS_YAML_READER", reader)
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": bomb})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    err = assert_one_line_error(code, stdout, stderr, f"kai-values.yaml:{line}: YAML nested deeper than 100 levels")
    assert "recursion" not in err and "syntax" not in err


def test_the_ruamel_reader_measures_depth_itself_without_libyamls_first_pass() -> None:
    from reconciler.core.errors import UserError
    from reconciler.yamlio.document import ruamel_documents

    assert ruamel_documents(_nested_blocks(100), "f.yaml")  # the limit itself is read
    for levels in (101, 3_000):
        with pytest.raises(UserError, match="nested deeper than 100 levels") as caught:
            ruamel_documents(_nested_blocks(levels), "f.yaml")
        assert caught.value.where == "f.yaml:101"
