"""`check --shard i/n` and `report merge` (issue 10, part 2): stable shards, a merge that equals one run.

Repositories are real pygit2 repositories: the fleet generator of the benchmark (bench/fleet_repo.py)
at a small size, and the template repo with waivers. Every run goes through the CLI (CliRunner), and the
merge reads the JSON files the shard runs wrote, as a CI merge job would.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.outputs import FORMATS
from reconciler.report.shards import Shard, assignment, parse_shard, shard_of
from tests.support.helpers import (
    ROOT,
    assert_one_line_error,
    commit_files,
    file_url,
    load_fleet_builder,
    make_bare_remote,
    make_repo,
    push,
    run_cli,
    template_files,
    timeless,
)

FLEET = 24
SHARDS = 3


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("fleet") / "repo"
    load_fleet_builder().write_fleet_repo(target, FLEET)
    return target


def check_to(path: Path, *args: Any) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(["check", *args, "-o", "json"])
    assert stderr == "", stderr
    path.write_text(stdout)
    return code, json.loads(stdout)


def merge(*args: Any) -> tuple[int, str, str]:
    return run_cli(["report", "merge", *args])


def merged_json(*args: Any) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = merge(*args, "-o", "json")
    assert stderr == "", stderr
    report = json.loads(stdout)
    assert report["exitCode"] == code
    return code, report


def shard_files(repo: Path, tmp_path: Path, count: int, *extra: Any) -> list[Path]:
    files = []
    for i in range(1, count + 1):
        out = tmp_path / f"shard-{i}.json"
        check_to(out, "--repo", repo, "--shard", f"{i}/{count}", *extra)
        files.append(out)
    return files


# -- the assignment -------------------------------------------------------------------------------------------------


names = st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), min_size=1, max_size=40, unique=True)


@given(names, st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), st.integers(1, 16))
@settings(max_examples=60, deadline=None)
def test_adding_a_cluster_moves_no_other_cluster(existing: list[str], new: str, count: int) -> None:
    before = assignment(existing, count)
    after = assignment([*existing, new], count)
    assert {n: after[n] for n in existing} == before


@pytest.mark.parametrize("count", [2, 3, 4, 8])
def test_one_more_shard_moves_about_one_in_n_and_only_to_the_new_shard(count: int) -> None:
    fleet_names = [f"cluster-{i:04d}" for i in range(3000)]
    before, after = assignment(fleet_names, count), assignment(fleet_names, count + 1)
    moved = [n for n in fleet_names if before[n] != after[n]]
    assert all(after[n] == count + 1 for n in moved)
    expected = len(fleet_names) / (count + 1)
    assert 0.8 * expected < len(moved) < 1.2 * expected, (len(moved), expected)


def test_shards_are_balanced() -> None:
    counts = list(assignment([f"c{i}" for i in range(4000)], 4).values())
    sizes = [counts.count(j) for j in (1, 2, 3, 4)]
    assert min(sizes) > 900 and max(sizes) < 1100, sizes


def test_assignment_is_a_function_of_the_name_only() -> None:
    # Each CI job is its own process (and maybe another kai-gitops version): the assignment must not depend on
    # the process (hash seed) or drift between releases, or two jobs would both skip a cluster. Pinned values
    # catch both; comparing a call with itself could not.
    pinned = {"prod-addon": 1, "lab-standalone": 2, "fleet-0001": 2, "fleet-0002": 1, "fleet-0003": 4}
    assert {name: shard_of(name, 4) for name in pinned} == pinned
    assert Shard(2, 4).owns("x") == (shard_of("x", 4) == 2)
    assert {shard_of("anything", 1)} == {1}


@pytest.mark.parametrize("text", ["", "x", "1", "1/", "/4", "0/4", "5/4", "1/0", "-1/4", "1/4/2", "1.5/4", "1/1001"])
def test_bad_shard_is_one_line_error(fleet: Path, text: str) -> None:
    assert_one_line_error(*run_cli(["check", "--repo", fleet, "--shard", text]), "shard")


def test_shard_parse_accepts_spaces_and_bounds() -> None:
    assert parse_shard(" 2 / 4 ") == Shard(2, 4)
    assert parse_shard("1/1") == Shard(1, 1)


def test_shard_and_cluster_cannot_be_combined(fleet: Path) -> None:
    assert_one_line_error(
        *run_cli(["check", "--repo", fleet, "--shard", "1/2", "--cluster", "fleet-0001"]), "--shard and --cluster"
    )


# -- shards over a real repository ------------------------------------------------------------------------------


def test_shards_partition_the_clusters_and_merge_to_the_unsharded_report(fleet: Path, tmp_path: Path) -> None:
    full_code, full = check_to(tmp_path / "full.json", "--repo", fleet)
    files = shard_files(fleet, tmp_path, SHARDS)
    seen: list[str] = []
    for i, file in enumerate(files, start=1):
        report = json.loads(file.read_text())
        assert report["shard"] == {"index": i, "count": SHARDS}
        assert all(shard_of(c["cluster"], SHARDS) == i for c in report["clusters"])
        seen += [c["cluster"] for c in report["clusters"]]
    assert sorted(seen) == sorted(c["cluster"] for c in full["clusters"]) and len(seen) == FLEET
    code, merged = merged_json(*files)
    assert code == full_code == 2
    assert timeless(merged) == timeless(full)


def test_merge_renders_text_with_the_fleet_total(fleet: Path, tmp_path: Path) -> None:
    files = shard_files(fleet, tmp_path, 2)
    code, stdout, stderr = merge(*files)
    assert (code, stderr) == (2, "")
    assert f"All clusters: {FLEET} checked" in stdout


def test_merge_fail_on_defaults_to_the_reports_and_can_be_overridden(tmp_path: Path) -> None:
    # Only an info finding: the template with a waiver that matches nothing.
    repo, _ = make_repo(tmp_path, template_files(**{"kai-gitops-waivers.yaml": waivers(waiver("KAI-Q-011"))}))
    files = shard_files(repo, tmp_path, 2)
    code, merged = merged_json(*files)
    assert (code, merged["failOn"], merged["summary"]["info"]) == (0, "warning", 1)
    code, merged = merged_json(*files, "--fail-on", "info")
    assert (code, merged["failOn"]) == (2, "info")


def test_merge_exit_zero_when_clean(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, template_files())
    files = shard_files(repo, tmp_path, 2)
    code, merged = merged_json(*files)
    assert code == 0 and merged["summary"]["errors"] == merged["summary"]["warnings"] == 0


# -- repository findings: waivers and policy changes -----------------------------------------------------------


def waivers(*entries: str) -> str:
    return "waivers:\n" + "".join(entries)


def waiver(rule: str, cluster: str | None = None, expires: str = "2099-12-31") -> str:
    scope = f"    cluster: {cluster}\n" if cluster else ""
    return (
        f"  - rule: {rule}\n    subject: '*'\n{scope}    reason: trial\n    owner: team@example.com\n"
        f'    expires: "{expires}"\n'
    )


SPREAD = ("clusters/lab/kai-values.yaml", "  placementStrategy: binpack", "  placementStrategy: spread")


def two_cluster_repo(tmp_path: Path, waivers_text: str) -> Path:
    """The template (prod-addon, lab-standalone) with lab's placement broken: KAI-V-001 in lab only."""
    repo, _ = make_repo(tmp_path, template_files(SPREAD, **{"kai-gitops-waivers.yaml": waivers_text}))
    assert shard_of("prod-addon", 2) != shard_of("lab-standalone", 2), "the test needs them on two shards"
    return repo


def repository_rules(report: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f["rule"], f["location"]["path"]) for f in report["repository"]["findings"])


def test_unscoped_waiver_used_by_one_shard_is_not_reported_unused(tmp_path: Path) -> None:
    repo = two_cluster_repo(tmp_path, waivers(waiver("KAI-V-001")))
    files = shard_files(repo, tmp_path, 2)
    per_shard = [repository_rules(json.loads(f.read_text())) for f in files]
    assert sorted(per_shard) == [[], [("KAI-W-002", "[0]")]]  # the shard without lab saw it unused
    _, merged = merged_json(*files)
    _, full = check_to(tmp_path / "full.json", "--repo", repo)
    assert repository_rules(merged) == repository_rules(full) == []


def test_unused_expired_and_scoped_waivers_are_reported_once(tmp_path: Path) -> None:
    text = waivers(
        waiver("KAI-Q-011"),
        waiver("KAI-Q-011", cluster="lab-standalone"),
        waiver("KAI-Q-011", cluster="prod-addon"),
        waiver("KAI-V-001", expires="2020-01-01"),
    )
    repo = two_cluster_repo(tmp_path, text)
    files = shard_files(repo, tmp_path, 2)
    _, merged = merged_json(*files)
    _, full = check_to(tmp_path / "full.json", "--repo", repo)
    expected = [("KAI-W-001", "[3]"), ("KAI-W-002", "[0]"), ("KAI-W-002", "[1]"), ("KAI-W-002", "[2]")]
    assert repository_rules(merged) == repository_rules(full) == expected
    assert merged["summary"] == full["summary"]


def test_policy_change_note_is_reported_once(tmp_path: Path) -> None:
    repo = two_cluster_repo(tmp_path, waivers(waiver("KAI-V-001", cluster="lab-standalone")))
    commit_files(repo, {"kai-gitops-waivers.yaml": waivers(waiver("KAI-V-001"))}, "widen the waiver")
    files = shard_files(repo, tmp_path, 2, "--base", "HEAD~1")
    assert all(("KAI-W-003", "") in repository_rules(json.loads(f.read_text())) for f in files)
    _, merged = merged_json(*files)
    _, full = check_to(tmp_path / "full.json", "--repo", repo, "--base", "HEAD~1")
    assert repository_rules(merged) == repository_rules(full)
    assert [r for r, _ in repository_rules(merged)].count("KAI-W-003") == 1


def test_unsharded_cluster_runs_merge_too(tmp_path: Path) -> None:
    repo = two_cluster_repo(tmp_path, waivers(waiver("KAI-V-001", cluster="lab-standalone")))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    check_to(a, "--repo", repo, "--cluster", "prod-addon")
    check_to(b, "--repo", repo, "--cluster", "lab-standalone")
    _, merged = merged_json(a, b)
    assert [c["cluster"] for c in merged["clusters"]] == ["prod-addon", "lab-standalone"]  # kai-gitops.yaml order
    assert "shard" not in merged


# -- what merge refuses -----------------------------------------------------------------------------------------


def edit(path: Path, change: Any) -> Path:
    report = json.loads(path.read_text())
    change(report)
    out = path.with_name("edited-" + path.name)
    out.write_text(json.dumps(report))
    return out


@pytest.fixture(scope="module")
def two_shards(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return shard_files(fleet, tmp_path_factory.mktemp("shards"), 2)


def test_merge_refuses_a_missing_shard(two_shards: list[Path]) -> None:
    assert_one_line_error(*merge(two_shards[0]), "shard(s) 2/2 missing")


def test_merge_refuses_a_shard_twice(two_shards: list[Path]) -> None:
    assert_one_line_error(*merge(two_shards[0], two_shards[0], two_shards[1]), "shard 1/2 is given twice")


def test_merge_refuses_overlapping_clusters_naming_the_file(two_shards: list[Path]) -> None:
    plain = edit(two_shards[0], lambda r: r.pop("shard"))
    again = plain.with_name("again.json")
    again.write_text(plain.read_text())
    stderr = assert_one_line_error(*merge(plain, again), "is also in", str(plain))
    assert str(again) in stderr


def test_merge_refuses_another_schema_version(two_shards: list[Path]) -> None:
    other = edit(two_shards[1], lambda r: r.update(schemaVersion=2))
    assert_one_line_error(*merge(two_shards[0], other), str(other), "schemaVersion 2")


def test_merge_refuses_another_command(two_shards: list[Path]) -> None:
    other = edit(two_shards[1], lambda r: r.update(command="diff"))
    assert_one_line_error(*merge(two_shards[0], other), str(other), "is a 'diff' report, but")
    doctor = edit(two_shards[1], lambda r: r.update(command="doctor"))
    assert_one_line_error(*merge(two_shards[0], doctor), str(doctor), "only check, reconcile, diff reports")


def test_merge_refuses_another_commit(two_shards: list[Path]) -> None:
    def recommit(report: dict[str, Any]) -> None:
        for cluster in report["clusters"]:
            cluster["git"]["commit"] = "0" * 40

    other = edit(two_shards[1], recommit)
    assert_one_line_error(*merge(two_shards[0], other), str(other), "commit 000000000000")


def test_merge_refuses_mixed_fail_on_unless_given(two_shards: list[Path]) -> None:
    other = edit(two_shards[1], lambda r: r.update(failOn="error"))
    assert_one_line_error(*merge(two_shards[0], other), "different --fail-on")
    assert merge(two_shards[0], other, "--fail-on", "warning")[0] == 2


def test_merge_refuses_mixed_sharded_and_plain(two_shards: list[Path]) -> None:
    plain = edit(two_shards[1], lambda r: r.pop("shard"))
    assert_one_line_error(*merge(two_shards[0], plain), str(plain), "not of a shard")


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"{not json", ":1: not a JSON report"),
        (b"[]", "not a kai-gitops JSON report"),
        (
            b'{"tool": "kai-gitops", "schemaVersion": 1, "command": "check", "failOn": "warning", "clusters": [{}]}',
            "documented shape",
        ),
        (
            b'{"tool": "kai-gitops", "schemaVersion": 1, "command": "check", "failOn": "loud", "clusters": []}',
            "documented shape",
        ),
    ],
)
def test_merge_refuses_broken_files_in_one_line(tmp_path: Path, content: bytes, needle: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    assert_one_line_error(*merge(bad), str(bad), needle)


_HEAD = b'{"tool": "kai-gitops", "schemaVersion": 1, "command": "check", "failOn": "warning", '
_LOCATED = (
    b'"clusters": [{"cluster": "a", "findings": [{"rule": "KAI-Q-001", "kind": "violation", '
    b'"severity": "error", "message": "m", "cluster": "a", "subject": null, "desired": null, '
    b'"live": null, "fix": null, "title": "t", "waived_by": null, "location": {"file": "f.yaml", '
    b'"line": "x", "column": 1, "path": "a"}}]}]}'
)


@pytest.mark.parametrize(
    "content",
    [
        _HEAD + b'"clusters": [], "rules": [{"id": "KAI-Q-001", "title": "t", "severity": "loud", "scope": "static", '
        b'"rationale": "r", "remediation": "r", "source": "s"}]}',
        _HEAD + b'"clusters": [], "changedLines": {"f.yaml": [1, "x"]}}',
        _HEAD + b'"clusters": [], "changedLines": {"f.yaml": [1, null]}}',
        _HEAD + _LOCATED,
    ],
)
def test_merge_refuses_ill_typed_fields_before_rendering(tmp_path: Path, content: bytes) -> None:
    """A hand-edited report (a rule severity no format knows, a line that is not a number) is one line
    naming the file, not an internal error in whichever format renders it."""
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    for fmt in ("sarif", "json"):
        assert_one_line_error(*merge(bad, "-o", fmt), str(bad), "documented shape")


def test_merge_missing_file_is_one_line_error(tmp_path: Path) -> None:
    assert_one_line_error(*merge(tmp_path / "nope.json"), "nope.json")


# -- a merged report renders like one run --------------------------------------------------------------------


def normalised(fmt: str, text: str) -> str:
    """The github format wraps the log in ::stop-commands:: with a fresh random token per run; JSON says when
    each run started (the shards and the single run start apart)."""
    if fmt in ("json", "jsonl"):
        return re.sub(r'"(generatedAt|firstSeen)": ?"[^"]*"', r'"\1": "<time>"', text)
    return re.sub(r"stop-commands::\w+|::\w{16,}::", "<token>", text) if fmt == "github" else text


@pytest.mark.parametrize("base", [False, True])
def test_merged_shards_render_every_format_as_one_run(
    fleet: Path, tmp_path: Path, base: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    repo, extra = fleet, []
    if base:  # a pull request that breaks one cluster's placement: changed lines order the annotations
        repo = tmp_path / "pr"
        load_fleet_builder().write_fleet_repo(repo, 12)
        values = "clusters/fleet-0005/kai-values.yaml"
        commit_files(repo, {values: (repo / values).read_text().replace("binpack\n", "spread\n", 1)}, "spread")
        extra = ["--base", "HEAD~1"]
    files = shard_files(repo, tmp_path, SHARDS, *extra)
    if base:
        assert any(json.loads(f.read_text()).get("changedLines") for f in files)
    for fmt in FORMATS:
        single = run_cli(["check", "--repo", repo, *extra, "-o", fmt])
        merged = merge(*files, "-o", fmt)
        assert merged[0] == single[0] and merged[2] == single[2] == "", (fmt, merged[2])
        assert normalised(fmt, merged[1]) == normalised(fmt, single[1]), fmt


def test_fleet_bench_quick_runs_and_checks_its_own_answers() -> None:
    """A smoke run of bench/check_fleet.py: it must finish and find merge == one run, and pair the whole check with
    a baseline tree (this one); timings are not judged."""
    import subprocess
    import sys

    bench = [sys.executable, str(ROOT / "bench" / "check_fleet.py"), "--quick", "--clusters", "8", "--shards", "2"]
    done = subprocess.run(
        [*bench, "--baseline", str(ROOT), "--pairs", "2"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["clusters"] == 8 and len(result["shards"]) == 2
    assert sum(s["clusters"] for s in result["shards"]) == 8
    assert result["merge_equals_check"] and result["naive_equals_check"]
    assert {"seconds", "cpu_s", "per_cluster_ms"} <= set(result["check"]) and "sharded_wall_s" in result
    baseline = result["baseline"]
    assert baseline["same_findings"] and len(baseline["pair_cpu_ratios"]) == 2
    assert min(baseline["pair_cpu_ratios"]) <= baseline["median_pair_ratio"] <= max(baseline["pair_cpu_ratios"])


def test_empty_shards_still_merge_to_the_single_run(tmp_path: Path) -> None:
    """Two clusters over five shards: three shards check nothing, and say every unscoped waiver is unused."""
    repo = two_cluster_repo(tmp_path, waivers(waiver("KAI-V-001"), waiver("KAI-Q-011")))
    files = shard_files(repo, tmp_path, 5)
    assert sum(not json.loads(f.read_text())["clusters"] for f in files) == 3
    code, merged = merged_json(*files)
    full_code, full = check_to(tmp_path / "full.json", "--repo", repo)
    # the merge and the single run start apart: a second between them changes generatedAt and firstSeen only
    untimed = [json.loads(normalised("json", json.dumps(r))) for r in (merged, full)]
    assert (code, untimed[0]) == (full_code, untimed[1])
    assert repository_rules(merged) == [("KAI-W-002", "[1]")]  # KAI-V-001's waiver was used by lab's shard


def test_merge_reads_a_report_from_stdin(two_shards: list[Path]) -> None:
    from click.testing import CliRunner

    from reconciler.cli import main

    result = CliRunner().invoke(
        main, ["report", "merge", "-", str(two_shards[1]), "-o", "json"], input=two_shards[0].read_bytes()
    )
    assert result.exit_code == 2, result.stderr
    assert json.loads(result.stdout)["summary"]["findings"] > 0


# -- an Indexed Job's pod: the shard from JOB_COMPLETION_INDEX ---------------------------------------------------


@pytest.mark.parametrize("index", range(SHARDS))
def test_auto_takes_the_shard_from_the_job_completion_index(fleet: Path, index: int) -> None:
    """`--shard auto/N` in the pod the Job controller gave index i checks what `--shard i+1/N` checks, and
    `report shard` names the same clusters."""
    env = {"JOB_COMPLETION_INDEX": str(index)}
    auto = run_cli(["check", "--repo", fleet, "--shard", f"auto/{SHARDS}", "-o", "json"], env=env)
    given_index = run_cli(["check", "--repo", fleet, "--shard", f"{index + 1}/{SHARDS}", "-o", "json"])
    assert timeless(json.loads(auto[1])) == timeless(json.loads(given_index[1]))
    names = [load_fleet_builder().cluster_name(i) for i in range(FLEET)]
    code, stdout, _ = run_cli(["report", "shard", "--shard", f"auto/{SHARDS}", *names], env=env)
    assert code == 0
    assert stdout.split() == [c["cluster"] for c in json.loads(auto[1])["clusters"]]


@pytest.mark.parametrize(
    ("env", "said"),
    [({}, "not set"), ({"JOB_COMPLETION_INDEX": "x"}, "'x'"), ({"JOB_COMPLETION_INDEX": str(SHARDS)}, "between 1 and")],
)
def test_auto_without_a_usable_completion_index_is_one_line_error(fleet: Path, env: dict[str, str], said: str) -> None:
    assert_one_line_error(*run_cli(["check", "--repo", fleet, "--shard", f"auto/{SHARDS}"], env=env), said)
    assert_one_line_error(*run_cli(["report", "shard", "--shard", f"auto/{SHARDS}", "a"], env=env), said)


# -- a hub's run: one commit for every cluster --------------------------------------------------------------------


def test_report_commit_prints_the_commit_the_ref_names_now_and_a_missing_ref_is_one_line_error(tmp_path: Path) -> None:
    """`report commit` resolves the ref once for a hub's whole run (deploy/helm's fleet script): through a clone URL
    it fetches first, so a commit pushed since its last fetch is what it prints."""
    repo, [first] = make_repo(tmp_path, {"a.txt": "1\n"})
    remote = make_bare_remote(tmp_path, repo)
    url = file_url(remote)
    assert run_cli(["report", "commit", "--repo", url, "--ref", "main"]) == (0, f"{first}\n", "")
    second = commit_files(repo, {"a.txt": "2\n"})
    push(repo)
    assert second != first
    assert run_cli(["report", "commit", "--repo", url, "--ref", "main"])[1] == f"{second}\n"
    assert run_cli(["report", "commit", "--repo", url, "--ref", first])[1] == f"{first}\n"
    assert_one_line_error(
        *run_cli(["report", "commit", "--repo", url, "--ref", "no-such-branch"]), "ref 'no-such-branch' does not exist"
    )
