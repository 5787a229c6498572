"""A third, independent Rego implementation (rego-cpp via regopy) agrees with regorus on the shipped pack.

No OPA binary can be installed here, so rego-cpp stands in as the independent check that the pack
does not lean on regorus quirks. It runs in a subprocess because rego-cpp can crash the interpreter.
Violation counts per rule are compared: rego-cpp's JSON rendering of sprintf'ed strings is unreliable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.checks.policy import make_engine
from tests.support.policy_shared import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]

WORKER = """
import json, sys
import regopy
from regopy.interpreter import rego_query
from regopy.output import rego_output_ok, rego_output_string
from reconciler.checks.policy import load_policy_set
policy_set = load_policy_set()
answers = {}
for path in sys.argv[1:]:
    interp = regopy.Interpreter()
    for f in policy_set.files:
        interp.add_module(f.name, f.text)
    interp.add_data_json(json.dumps(policy_set.data))
    interp.set_input_term(open(path).read())
    counts = {}
    for package in sorted({f.package for f in policy_set.files if f.package.startswith("kai_gitops.rules.")}):
        out = rego_query(interp._impl, f"[data.{package}.meta.id, count(data.{package}.violations)]")
        text = rego_output_string(out)
        if not rego_output_ok(out):
            raise SystemExit(f"{package}: {text[:300]}")
        rule_id, n = json.loads(text)["expressions"][0]
        counts[rule_id] = n
    answers[path] = counts
print(json.dumps(answers))
"""


def test_rego_cpp_counts_match_regorus(shipped) -> None:
    pytest.importorskip("regopy")
    # with the function-chart objects too, whose rules are static (the live examples carry none)
    paths = sorted(str(p) for p in [*EXAMPLES.glob("facts-live*.json"), EXAMPLES / "facts-static-workloads.json"])
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, *paths], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:] or f"regopy crashed with {proc.returncode}"
    answers = json.loads(proc.stdout.strip().splitlines()[-1])
    engine = make_engine(shipped)
    for path, counts in answers.items():
        results = engine.evaluate(json.loads(Path(path).read_text()))
        expected = {rule_id: sum(r.rule.id == rule_id for r in results) for rule_id in shipped.rules}
        assert counts == expected, path
