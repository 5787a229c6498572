"""Benchmark: `check` over a fleet of 300 clusters — one runner, 4 shards plus the merge, and the naive way.

Generates a real Git repository (pygit2) of N clusters, half add-on and half standalone, every file
distinct (bench/fleet_repo.py), then times each run as a separate `python -m reconciler` process, the
way CI runs it:

- `check`: the whole fleet on one runner (libyaml reader, parse cache, warmed regorus engine);
- `naive`: the same check with the old reader path in the same run — ruamel for every file, no parse
  cache (`KAI_GITOPS_YAML_READER=ruamel KAI_GITOPS_PARSE_CACHE=0`); `ruamel_cached` keeps the cache;
- `shards`: `check --shard i/4`, one process each, run one after another (each as on its own runner),
  then `report merge` of their JSON; `sharded_wall_s` is what a CI matrix waits for (slowest shard +
  merge, runner start-up not included);
- `startup`: `kai-gitops --version`, the floor every process pays.

Wall time and CPU time (user+sys of the child) are both printed: on a shared machine CPU time is the
steadier figure. The outputs are compared too (the merge must equal the single run, and the naive
run must find the same), so a fast wrong answer cannot pass as a speed-up.

`--baseline TREE` also times the whole check with another source tree (e.g. the main branch exported
with `git archive main | tar -x -C TREE`) and compares what it finds. `--pairs N` runs the two trees in turn
N times and prints each pair's CPU ratio and their median: on a machine whose speed swings within minutes,
the ratio of two runs seconds apart is the steady figure.

    python bench/check_fleet.py [--clusters 300] [--shards 4] [--quick] [--keep DIR] [--baseline TREE] [--pairs N]

Prints progress on stderr and one JSON object as the last line of stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from fleet_repo import write_fleet_repo  # noqa: E402

NAIVE_ENV = {"KAI_GITOPS_YAML_READER": "ruamel", "KAI_GITOPS_PARSE_CACHE": "0"}


def run(
    repo: Path, args: list[str], out: Path | None = None, env: dict[str, str] | None = None, source: Path = ROOT
) -> dict[str, Any]:
    """One kai-gitops process (of the source tree `source`): wall and CPU seconds, exit code; stdout to `out`."""
    full_env = {**os.environ, "PYTHONPATH": str(source), **(env or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", *args], cwd=repo, env=full_env, capture_output=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        raise SystemExit(f"kai-gitops {' '.join(args)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    if out is not None:
        out.write_bytes(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": round(wall, 3), "cpu_s": round(cpu, 3), "exit": done.returncode}


def best_of(repeat: int, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The fastest of `repeat` runs: the least disturbed by whatever else the machine is doing."""
    runs = [run(*args, **kwargs) for _ in range(repeat)]
    return min(runs, key=lambda r: r["cpu_s"])


def paired(
    pairs: int, repo: Path, args: list[str], outs: tuple[Path, Path], baseline_tree: Path
) -> tuple[dict[str, Any], dict[str, Any], list[float]]:
    """This tree and `baseline_tree` run in turn `pairs` times: the fastest of each, and each pair's CPU ratio
    (this tree's over the baseline's). This machine's speed swings within minutes, so trees timed in separate
    phases are not comparable; a pair's two runs are seconds apart."""
    mine, theirs = [], []
    for _ in range(pairs):
        mine.append(run(repo, args, outs[0]))
        theirs.append(run(repo, args, outs[1], source=baseline_tree))
    ratios = [round(m["cpu_s"] / t["cpu_s"], 3) for m, t in zip(mine, theirs, strict=True)]
    return min(mine, key=lambda r: r["cpu_s"]), min(theirs, key=lambda r: r["cpu_s"]), ratios


def per_cluster(result: dict[str, Any], clusters: int, startup: dict[str, Any]) -> dict[str, Any]:
    return {
        **result,
        "per_cluster_ms": round(1000 * result["seconds"] / clusters, 2),
        "per_cluster_cpu_ms_after_startup": round(1000 * (result["cpu_s"] - startup["cpu_s"]) / clusters, 2),
    }


def findings_of(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a check found, in terms every report version shares (for comparing with an older tree)."""
    return sorted(
        (
            c["cluster"],
            f["rule"],
            f["message"],
            f["waived_by"] is None,
            *((f["location"] or {}).get(k) for k in ("file", "line", "column", "path")),
        )
        for c in report["clusters"]
        for f in c["findings"]
    )


def baseline(
    repo: Path,
    source: Path,
    clusters: int,
    startup: dict[str, Any],
    work: Path,
    full_report: dict[str, Any],
    pairs: int = 1,
) -> dict[str, Any]:
    """The whole check run by another source tree (e.g. `git archive main | tar -x -C DIR`), same fleet; with
    `pairs` > 1, in turn with this tree's, and each pair's CPU ratio."""
    if pairs > 1:
        outs = (work / "paired.json", work / "baseline.json")
        _, best, ratios = paired(pairs, repo, ["check", "-o", "json"], outs, source)
        extra: dict[str, Any] = {"pair_cpu_ratios": ratios, "median_pair_ratio": statistics.median(ratios)}
    else:
        best, extra = best_of(1, repo, ["check", "-o", "json"], work / "baseline.json", source=source), {}
    result = per_cluster(best, clusters, startup) | extra
    result["same_findings"] = findings_of(json.loads((work / "baseline.json").read_text())) == findings_of(full_report)
    log(f"baseline {source}: {result['seconds']} s" + (f", pair ratios {ratios}" if pairs > 1 else ""))
    return {"source": str(source), **result}


def bench(
    clusters: int, shards: int, repeat: int, work: Path, baseline_tree: Path | None = None, pairs: int = 1
) -> dict[str, Any]:
    repo = work / "fleet"
    start = time.perf_counter()
    write_fleet_repo(repo, clusters)
    generated = round(time.perf_counter() - start, 3)
    files = sum(1 for p in repo.rglob("*.yaml") if ".git" not in p.parts)
    log(f"generated {clusters} clusters ({files} YAML files) in {generated} s")

    startup = best_of(repeat, repo, ["--version"])
    full = per_cluster(best_of(repeat, repo, ["check", "-o", "json"], work / "full.json"), clusters, startup)
    log(f"check: {full['seconds']} s")
    naive = per_cluster(
        best_of(1, repo, ["check", "-o", "json"], work / "naive.json", env=NAIVE_ENV), clusters, startup
    )
    log(f"naive check (ruamel, no parse cache): {naive['seconds']} s")
    ruamel_cached = per_cluster(
        best_of(1, repo, ["check", "-o", "json"], env={"KAI_GITOPS_YAML_READER": "ruamel"}), clusters, startup
    )
    log(f"ruamel with parse cache: {ruamel_cached['seconds']} s")

    shard_runs = []
    for i in range(1, shards + 1):
        out = work / f"shard-{i}.json"
        result = best_of(repeat, repo, ["check", "--shard", f"{i}/{shards}", "-o", "json"], out)
        result["clusters"] = len(json.loads(out.read_text())["clusters"])
        shard_runs.append({"shard": f"{i}/{shards}", **result})
        log(f"shard {i}/{shards}: {result['clusters']} clusters, {result['seconds']} s")
    shard_files = [str(work / f"shard-{i}.json") for i in range(1, shards + 1)]
    merge = best_of(repeat, repo, ["report", "merge", *shard_files, "-o", "json"], work / "merged.json")
    merge_text = best_of(repeat, repo, ["report", "merge", *shard_files])
    log(f"merge: {merge['seconds']} s")

    full_report = json.loads((work / "full.json").read_text())
    merged = json.loads((work / "merged.json").read_text())
    naive_report = json.loads((work / "naive.json").read_text())
    slowest = max(r["seconds"] for r in shard_runs)
    extra = (
        {"baseline": baseline(repo, baseline_tree, clusters, startup, work, full_report, pairs)}
        if baseline_tree
        else {}
    )
    return extra | {
        "benchmark": "check_fleet",
        "clusters": clusters,
        "yaml_files": files,
        "generate_s": generated,
        "repeat": repeat,
        "startup": startup,
        "check": full,
        "naive": naive,
        "ruamel_cached": ruamel_cached,
        "speedup_vs_naive": round(naive["seconds"] / full["seconds"], 2),
        "speedup_vs_naive_cpu": round(naive["cpu_s"] / full["cpu_s"], 2),
        "shards": shard_runs,
        "merge": merge,
        "merge_text": merge_text,
        "sharded_wall_s": round(slowest + merge["seconds"], 3),
        "findings": full_report["summary"],
        "merge_equals_check": timeless(full_report) == timeless(merged),
        "naive_equals_check": timeless(naive_report) == timeless(full_report),
    }


def timeless(report: Any) -> Any:
    """A JSON report without the times that say when its run ran: the runs compared start apart."""
    if isinstance(report, dict):
        return {k: timeless(v) for k, v in report.items() if k not in ("generatedAt", "firstSeen")}
    if isinstance(report, list):
        return [timeless(v) for v in report]
    return report


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=None, help="fleet size (default 300; --quick: 24)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs per measurement, best kept (default 3; --quick: 1)"
    )
    parser.add_argument("--quick", action="store_true", help="a small fleet, one run each (a smoke test)")
    parser.add_argument("--keep", type=Path, default=None, help="write the repository and reports here")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="TREE",
        help="also time the whole check with this source tree (e.g. an export of main)",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=1,
        help="with --baseline: run the whole check with this tree and the baseline in turn this many times, "
        "and print each pair's CPU ratio and their median",
    )
    args = parser.parse_args()
    clusters = args.clusters or (24 if args.quick else 300)
    repeat = args.repeat or (1 if args.quick else 3)
    work = args.keep or Path(tempfile.mkdtemp(prefix="kai-gitops-fleet-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        baseline_tree = args.baseline.resolve() if args.baseline else None
        result = bench(clusters, args.shards, repeat, work, baseline_tree, args.pairs)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
