"""`kai-gitops policy test`: run Rego unit tests the way `opa test` does, on the embedded engine.

A test is a rule named `test_*` in a `*_test.rego` file; it passes when it evaluates to true. Policy
files next to the tests are loaded with them, and so is the shipped pack, so user tests can use its
helpers and rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.checks.policy.pack import (
    SHIPPED_LABEL,
    PolicyFile,
    collect_policy_files,
    merge_data_files,
    shipped_data_files,
    shipped_policy_dir,
)
from reconciler.checks.policy.regorus_engine import clone, compile_policies, eval_value
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject
from reconciler.core.printable import visible

if TYPE_CHECKING:
    from reconciler.checks.policy.owned import OwnedEngine

_TEST_RULE_RE = re.compile(r"^(test_\w+)\b", re.MULTILINE)


@dataclass(frozen=True)
class PolicyTestResult:
    file: str
    package: str
    name: str
    passed: bool
    detail: str | None = None  # why it failed: "false", "undefined" or an evaluation error

    @property
    def qualified(self) -> str:
        return f"data.{self.package}.{self.name}"


@dataclass(frozen=True)
class TestReport:
    results: tuple[PolicyTestResult, ...]
    __test__ = False  # not a pytest test class, despite the name

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


def run_policy_tests(
    dirs: list[Path] | None = None, data_files: list[Path] | None = None, *, user_data: JSONObject | None = None
) -> TestReport:
    """Run every test in `dirs` (default: the shipped pack) and report each one.

    `user_data` is mounted at `data.user`, where `check`/`diff` put the repo's `policies.data`.
    """
    shipped = (shipped_policy_dir(), SHIPPED_LABEL)
    roots = [(Path(d), str(d)) for d in dirs] if dirs else [shipped]
    tests = collect_policy_files(roots, tests=True)
    if not tests:
        where = ", ".join(str(d) for d in dirs or [])
        raise UserError(f"no *_test.rego files in {where}", hint="a mistyped directory must not pass silently")
    policies = collect_policy_files([*roots, shipped], tests=False)
    data = merge_data_files(shipped_data_files() + list(data_files or []))
    if user_data:
        data = {**data, "user": user_data}
    engine = compile_policies(policies + tests, data)
    results = [run_one(clone(engine), f, name) for f in tests for name in find_test_rules(f)]
    return TestReport(tuple(results))


def find_test_rules(f: PolicyFile) -> list[str]:
    return list(dict.fromkeys(_TEST_RULE_RE.findall(f.text)))  # a test may have several bodies


def run_one(engine: OwnedEngine, f: PolicyFile, name: str) -> PolicyTestResult:
    try:
        defined, value = eval_value(engine, f"data.{f.package}.{name}")
    except UserError as exc:
        return PolicyTestResult(f.name, f.package, name, False, exc.line())
    if value is True:
        return PolicyTestResult(f.name, f.package, name, True)
    return PolicyTestResult(f.name, f.package, name, False, "undefined" if not defined else f"got {value!r}")


def format_report(report: TestReport, verbose: bool = False) -> str:
    """Failures (every test with verbose), then the summary line `N passed, M failed` last."""
    lines = []
    for r in report.results:
        if r.passed and verbose:
            lines.append(f"PASS {r.file}: {r.qualified}")
        elif not r.passed:
            lines.append(f"FAIL {r.file}: {r.qualified} ({r.detail})")
    lines.append(report.summary())
    return "\n".join(visible(line) for line in lines)  # file and test names come from Git
