"""Benchmark: the PR check's policy evaluation per cluster, the whole pack's query against the static answer.

`check` (static scope) used to query `data.kai_gitops.rules`, every rule package with its `meta`, and keep the
static rules' results; it now evaluates the static answer (checks/policy/regorus_engine.add_static_answer): the
static packages' `violations` only, as one rule read without a query (the query of the same answer when that
rule is undefined). `answer_query` is the way before that rule: the same answer, queried. All three run here in
one process over the facts of bench/fleet_repo.py's clusters, interleaved, and their results must be equal for
every cluster.

    python bench/static_answer.py [--clusters 1000] [--rounds 3]

One JSON object as the last line of stdout: milliseconds a cluster per round for each way, and the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fleet_repo import write_fleet_repo  # noqa: E402

from reconciler.checks.policy import regorus_engine  # noqa: E402


def captured_facts(repo: Path) -> tuple[Any, list[Any]]:
    """The engine and every cluster's facts of one `check` of `repo` (its report discarded)."""
    from reconciler.cli import main

    seen: list[tuple[Any, Any]] = []
    evaluate = regorus_engine.RegorusEngine.evaluate

    def spy(self: Any, facts: Any) -> Any:
        seen.append((self, facts))
        return evaluate(self, facts)

    regorus_engine.RegorusEngine.evaluate = spy  # type: ignore[method-assign]
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            main(["check", "-o", "json"], standalone_mode=False)
    except SystemExit:
        pass
    finally:
        os.chdir(cwd)
        regorus_engine.RegorusEngine.evaluate = evaluate  # type: ignore[method-assign]
    return seen[0][0], [facts for _, facts in seen]


class AnswerQuery(regorus_engine.RegorusEngine):
    """The static answer as it was read before the `whole` rule: the partial object `answer`, queried."""

    def static_tree(self, facts: Any, static: Any) -> Any:
        return self.evaluate_tree(facts, static.query)


def bench(clusters: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kai-bench-static-") as tmp:
        write_fleet_repo(Path(tmp) / "repo", clusters)
        engine, facts = captured_facts(Path(tmp) / "repo")
    ways = {
        "whole_pack": regorus_engine.RegorusEngine(dataclasses.replace(engine._set, static_answer=None)),
        "answer_query": AnswerQuery(engine._set),
        "static_answer": regorus_engine.RegorusEngine(engine._set),
    }
    ms: dict[str, list[float]] = {name: [] for name in ways}
    equal = True
    for _ in range(rounds):
        answers = {}
        for name, way in ways.items():
            started = time.perf_counter()
            answers[name] = [way.evaluate(f) for f in facts]
            ms[name].append(round((time.perf_counter() - started) / len(facts) * 1000, 2))
        equal = equal and answers["whole_pack"] == answers["static_answer"] == answers["answer_query"]
    return {
        "benchmark": "static_answer",
        "clusters": len(facts),
        "static_packages": len(engine._set.static_answer.rules) if engine._set.static_answer else 0,
        "rules": len(engine._set.rules),
        "ms_a_cluster": ms,
        "median_ratio": round(statistics.median(ms["static_answer"]) / statistics.median(ms["whole_pack"]), 2),
        "median_ratio_vs_answer_query": round(
            statistics.median(ms["static_answer"]) / statistics.median(ms["answer_query"]), 2
        ),
        "results_equal": equal,
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(bench(args.clusters, args.rounds)))


if __name__ == "__main__":
    main()
