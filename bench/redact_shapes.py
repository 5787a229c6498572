"""Benchmark: redact_text on long runs of URL-scheme and flag characters, plain patterns vs run-start ones.

The plain patterns (as before) try every position of a run and scan to its end from each: quadratic. The
shipped ones start only where a run starts. Both mask exactly the same (tests/redaction/test_redact_linear.py).
Prints one JSON object as the last line.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reconciler.core.redact import redact_text
from tests.support.redaction_redact_linear import _plain

INPUTS = {
    "30k letters": "x" * 30_000,
    "9k kebab (a-b…)": "a-b" * 3_000,
    "message with a 20k token": "value " + "q" * 20_000 + " https://u:pw@host/x",
}


def timed(fn: Callable[[str], str], text: str) -> float:
    started = time.perf_counter()
    fn(text)
    return round(time.perf_counter() - started, 4)


def main() -> None:
    rows = {
        name: {
            "chars": len(text),
            "plain_s": timed(_plain, text),
            "ours_s": timed(redact_text, text),
            "same_output": _plain(text) == redact_text(text),
        }
        for name, text in INPUTS.items()
    }
    for name, row in rows.items():
        print(f"{name}: {row}", file=sys.stderr)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
