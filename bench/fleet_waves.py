"""Benchmark: a fleet of --clusters (default 1,000) self-heal CronJobs under rollout waves, on a scripted clock
(tests/support/fleet.py: kai-gitops.yaml parsed by the product, each run's status read, wave decision, post-apply
health and status write through reconcile/rollout.py, each cluster's health after an apply predicted by NVCA's
own kai-scheduler-queues check over the commit's Queues; the statuses on an in-process board that
tests/fleet/test_fleet_waves.py proves answers as the GitHub stand-in does).

Waves: canary 1 % (soak 1h), early to 10 % (1h), main to 40 % (1h), the rest; each CronJob hourly at its own
minute. Scenarios: a good change, a bad one (default-queue's GPUs capped: NVCA unhealthy), the bad one then a
fix, and the races (two runs of each cluster at once, every status landing 20 minutes late, 5xx on status reads
and writes). Beside them, the naive way in the same run: self-heal without waves, each cluster applying the
branch head at its next run.

Prints one JSON object as the last line: per scenario the clusters that applied the change, held (with the
reason), waiting, unreadable (their last status read failed: nothing applied), order violations (each apply
checked against the landed statuses, not the decision's code), minutes from the merge to the first failure
report (time to halt), clusters at the final commit, per wave the first and last apply in hours after the
merge, and the seconds the scenario took to simulate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fleet import BAD, GOOD, HOUR, SCENARIOS, Scenario, fleet_config, simulate  # noqa: E402


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="50 clusters")
    args = parser.parse_args(argv)
    size = 50 if args.quick else args.clusters
    started = time.perf_counter()
    config = fleet_config(size)
    config_s = time.perf_counter() - started
    scenarios = []
    for scenario in SCENARIOS:
        began = time.perf_counter()
        table = simulate(size, scenario, config=config).table()
        table["simulated_s"] = round(time.perf_counter() - began, 2)
        scenarios.append(table)
    naive = []
    for name, commit in (("naive: bad change, no waves", BAD), ("naive: good change, no waves", GOOD)):
        result = simulate(size, Scenario(name, ((0.0, commit),), hours=2), config=config, naive=True)
        times = [a.at for a in result.applies]
        naive.append(
            {
                "scenario": name,
                "applied": len(result.applies),
                "unhealthy_after_apply": sum(1 for a in result.applies if not a.healthy),
                "last_apply_h": round(max(times) / HOUR, 2) if times else None,
            }
        )
    return {
        "clusters": size,
        "config_parse_s": round(config_s, 2),
        "waves": [
            {"name": w.name, "clusters": len(m), "soak_s": w.soak_s}
            for w, m in zip(config.rollout.waves, config.rollout.members, strict=True)
        ]
        if config.rollout
        else [],
        "scenarios": scenarios,
        "naive": naive,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
