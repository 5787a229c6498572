"""Benchmark: `check` of one cluster whose KAI values file is large (1, 2, 4, 8 MB of tolerations), today and
before, in the same run.

Issue 30 measured a 5 MB values file (54,000 tolerations, inside the documented limits) at 14 s for
`check`, ~8.5 s of it in `yamlio/spans.py`: the first finding that named a location composed the whole file
again with libyaml to learn where the value ends, once per document object holding the file. Now the
reader records every end while it converts the nodes it already composed, and redaction looks for the
literal each pattern needs (a scheme, `://`, `=`, a flag word) before running the pattern.

The repository is bench/fleet_repo.py's (two clusters) with cluster fleet-0001's KAI values replaced by a
file of N MB: `global.tolerations` of distinct entries (every key and value unique, so no cache can find
them equal; ~155 bytes each, so 8 MB stays inside the reader's 500,000-value budget -- at the issue's ~93
bytes a toleration, 8 MB would be ~770,000 values and refused) and the placement the fleet's other findings
need. Each size is checked as a separate `python -m reconciler check -o json` process, with this tree and,
with `--baseline TREE`, with another one (e.g. main: `git archive main | tar -x -C TREE`); both reports
must name the same findings.

    python bench/values_size.py [--sizes 1,2,4,8] [--baseline TREE] [--repeat 1] [--pairs N]

`--pairs N` (with `--baseline`) runs the two trees in turn N times per size, and prints each pair's CPU ratio and
their median: this machine's speed swings within minutes, and two runs seconds apart see the same machine.

Each size also reads its values file in this process with the native YAML reader and with the composer path
behind it (`reader`: CPU seconds of each, and whether they read the same).

Wall and CPU seconds are printed per size, and `cpu_s_per_mb` with the ratio of the largest size's to the
smallest's (1.0 is linear). Progress on stderr, one JSON object as the last line of stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

from reconciler.yamlio import libyaml
from reconciler.yamlio.document import MAX_NODES

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from check_fleet import best_of, findings_of, log, paired  # noqa: E402
from fleet_repo import write_fleet_repo  # noqa: E402

BIG_CLUSTER_FILE = "clusters/fleet-0001/kai-values.yaml"


def tolerations_values(megabytes: float) -> tuple[str, int]:
    """A KAI values file of about `megabytes` MB (10^6 bytes) of distinct tolerations; the count with it."""
    head = "# KAI Scheduler values with a large toleration list.\nglobal:\n  tolerations:\n"
    tail = "scheduler:\n  placementStrategy: binpack\n"
    items: list[str] = []
    size = len(head) + len(tail)
    while size < megabytes * 1_000_000:
        i = len(items)
        item = (
            f"    - key: nvidia.com/gpu-pool-{i:06d}.reserved.example.com\n      operator: Equal\n"
            f'      value: "team-{i:06d}-reserved-capacity"\n      effect: NoSchedule\n'
        )
        items.append(item)
        size += len(item)
    return head + "".join(items) + tail, len(items)


def write_repo(target: Path, megabytes: float) -> int:
    """The two-cluster fleet with fleet-0001's KAI values at `megabytes` MB, committed; the toleration count."""
    write_fleet_repo(target, 2)
    text, count = tolerations_values(megabytes)
    (target / BIG_CLUSTER_FILE).write_text(text)
    repo = pygit2.Repository(str(target))
    repo.index.add_all()
    repo.index.write()
    signature = pygit2.Signature("kai-gitops bench", "bench@example.invalid", 1764400000, 0)
    repo.create_commit(
        "HEAD", signature, signature, f"{megabytes} MB values", repo.index.write_tree(), [repo.head.target]
    )
    return count


def reader_costs(text: str) -> dict[str, Any]:
    """CPU seconds to read `text` in this process with the native reader and with the composer path it stands
    in front of (PyYAML's C composer, then the conversion in Python), the collector paused as the product
    pauses it, and whether the two readings are the same (data with its types and key order, positions, ends:
    compared as their repr, where True, 1 and 1.0 differ)."""

    def timed(native: bool) -> tuple[float, Any]:
        saved = libyaml._native_read
        if not native:
            libyaml._native_read = None
        gc.disable()
        try:
            start = time.process_time()
            read = libyaml.documents_and_ends(text, MAX_NODES)
            return time.process_time() - start, read
        finally:
            gc.enable()
            libyaml._native_read = saved

    if libyaml._native_read is None:
        return {"native": "not built"}
    native_s, native = timed(native=True)
    composer_s, composed = timed(native=False)
    return {
        "native_cpu_s": round(native_s, 4),
        "composer_cpu_s": round(composer_s, 4),
        "composer_over_native": round(composer_s / native_s, 2) if native_s else None,
        "same_reading": native is not None and repr(native) == repr(composed),  # None: the native reader declined
    }


def linearity(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Seconds per MB at each size, and the largest size's over the smallest's (1.0: linear in the size)."""
    per_mb = [round(r[key]["cpu_s"] / r["megabytes"], 3) for r in runs]
    return {"cpu_s_per_mb": per_mb, "largest_over_smallest": round(per_mb[-1] / per_mb[0], 2)}


def bench(sizes: list[float], repeat: int, work: Path, baseline_tree: Path | None, pairs: int = 1) -> dict[str, Any]:
    runs = []
    for megabytes in sizes:
        repo = work / f"values-{megabytes}mb"
        count = write_repo(repo, megabytes)
        outs = (work / f"now-{megabytes}.json", work / f"before-{megabytes}.json")
        if baseline_tree is not None and pairs > 1:
            now, before, ratios = paired(pairs, repo, ["check", "-o", "json"], outs, baseline_tree)
        else:
            now = best_of(repeat, repo, ["check", "-o", "json"], outs[0])
        run: dict[str, Any] = {
            "megabytes": megabytes,
            "tolerations": count,
            "bytes": (repo / BIG_CLUSTER_FILE).stat().st_size,
            "check": now,
            "reader": reader_costs((repo / BIG_CLUSTER_FILE).read_text()),
        }
        log(f"{megabytes} MB ({count} tolerations): {now['seconds']} s, {now['cpu_s']} s CPU")
        if baseline_tree is not None:
            if pairs <= 1:
                before = best_of(1, repo, ["check", "-o", "json"], outs[1], source=baseline_tree)
            same = findings_of(json.loads(outs[1].read_text())) == findings_of(json.loads(outs[0].read_text()))
            run |= {"baseline": before, "same_findings": same, "speedup_cpu": round(before["cpu_s"] / now["cpu_s"], 2)}
            if pairs > 1:
                run |= {"pair_cpu_ratios": ratios, "median_pair_ratio": statistics.median(ratios)}
            log(f"  baseline: {before['seconds']} s, {before['cpu_s']} s CPU, same findings: {same}")
        runs.append(run)
    result: dict[str, Any] = {
        "benchmark": "values_size",
        "repeat": repeat,
        "pairs": pairs,  # with a baseline and pairs > 1, each size ran in pairs instead of `repeat` times
        "runs": runs,
        "check_linearity": linearity(runs, "check"),
    }
    if baseline_tree is not None:
        result |= {"baseline_source": str(baseline_tree), "baseline_linearity": linearity(runs, "baseline")}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,2,4,8", help="MB sizes of the values file, comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size of this tree; the fastest is kept")
    parser.add_argument("--baseline", type=Path, help="another source tree to time on the same files")
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    parser.add_argument(
        "--pairs",
        type=int,
        default=1,
        help="with --baseline: run this tree and the baseline in turn this many times per size (instead of "
        "--repeat), and print each pair's CPU ratio and their median",
    )
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = bench(sizes, args.repeat, args.keep, args.baseline, args.pairs)
    else:
        with tempfile.TemporaryDirectory(prefix="kai-values-bench-") as tmp:
            result = bench(sizes, args.repeat, Path(tmp), args.baseline, args.pairs)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
