"""Benchmark: `--k8s-audit-log` on a ~200 MB audit log (tests/support/audit_log.py), streamed.

Three logs of the same size: "sparse" (the traffic is about 500 other queues and leases: most lines are skipped
unparsed), "hot" (every line names the drifted queue: every ResponseComplete line is parsed) and "hot" gzip. Each
is read in a child process of its own, so its peak RSS is the read's alone; an empty log gives the baseline (the
interpreter and kai-gitops's modules). Prints one JSON object as the last line: per log its size, lines, the
read's seconds, MB/s, peak RSS and peak RSS above the baseline, and that the person's write was found.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MB = 1_000_000


def read_one(log: str) -> None:
    """In the child: one read, then its time, peak RSS and who it found, as JSON."""
    from datetime import UTC, datetime

    from reconciler.app.last_writes import audit_target
    from reconciler.core.resources import queue_ref
    from reconciler.sources.audit_log import last_writes

    target = audit_target(queue_ref("default-queue"))
    assert target is not None
    started = time.perf_counter()
    found = last_writes([log] if log else [], [target], datetime.now(UTC))
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: kilobytes
    write = found.get(target)
    print(
        json.dumps(
            {
                "seconds": round(seconds, 3),
                "peak_rss_mb": round(peak_kb / 1024, 1),
                "found": write.user if write else None,
            }
        )
    )


def measured(log: Path | None) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--read", str(log or "")], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="20 MB logs instead of 200 MB")
    parser.add_argument("--mb", type=int, default=None, help="log size in MB")
    parser.add_argument("--read", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read is not None:
        read_one(args.read)
        return
    from tests.support.audit_log import write_noise_log

    size = (args.mb or (20 if args.quick else 200)) * MB
    baseline = measured(None)
    rows: dict[str, object] = {"baseline_peak_rss_mb": baseline["peak_rss_mb"]}
    with tempfile.TemporaryDirectory(prefix="kai-gitops-audit-bench-") as tmp:
        for name, hot, compress in (("sparse", False, False), ("hot", True, False), ("hot-gzip", True, True)):
            log = Path(tmp) / f"{name}.log"
            lines = write_noise_log(log, size, hot=hot, compress=compress)
            result = measured(log)
            seconds = float(str(result["seconds"]))
            rows[name] = {
                "uncompressed_mb": round(size / MB),
                "file_mb": round(log.stat().st_size / MB, 1),
                "lines": lines,
                **result,
                "mb_per_s": round(size / MB / seconds, 1),
                "peak_above_baseline_mb": round(
                    float(str(result["peak_rss_mb"])) - float(str(baseline["peak_rss_mb"])), 1
                ),
            }
            print(f"{name}: {rows[name]}", file=sys.stderr)
            log.unlink()
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
