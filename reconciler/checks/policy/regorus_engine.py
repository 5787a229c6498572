"""The embedded engine: regorus (Rego in Rust), prepared once and cloned per evaluation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

import orjson
import regorus

from reconciler.checks.policy.budget import RegoBudget, run_within
from reconciler.checks.policy.owned import OwnedEngine
from reconciler.checks.policy.pack import (
    RULES_QUERY,
    PolicyFile,
    PolicyResult,
    PolicySet,
    StaticAnswer,
    collect_results,
    collect_static_results,
    facts_scope,
    is_rule_package,
)
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONLike, JSONValue, expect_object, list_at
from reconciler.findings.rules import Scope

_LOCATION_RE = re.compile(r"-->\s*(\S+?):(\d+):(\d+)")
_ERROR_RE = re.compile(r"^error:\s*(.+)$", re.MULTILINE)


def rego_error(exc: BaseException, context: str = "") -> UserError:
    """One line "file:line:col: message" from a regorus error, without the Rust backtrace.

    regorus appends "Stack backtrace:" whenever RUST_BACKTRACE is set; operators need the place and
    the reason only.
    """
    text = str(exc).split("Stack backtrace:")[0]
    location = _LOCATION_RE.search(text)
    found = _ERROR_RE.search(text)
    message = (
        found.group(1).strip()
        if found
        else next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)
    )
    where = f"{location.group(1)}:{location.group(2)}:{location.group(3)}" if location else None
    return UserError(f"{context}{message}", where=where)


def compile_policies(files: list[PolicyFile], data: Mapping[str, JSONLike]) -> OwnedEngine:
    engine = regorus.Engine()
    for f in files:
        try:
            engine.add_policy(f.name, f.text)
        except RuntimeError as exc:
            raise rego_error(exc) from None
    try:
        engine.add_data_json(json.dumps(data))
    except RuntimeError as exc:
        raise rego_error(exc, "policy data: ") from None
    return OwnedEngine(engine)


# A package of our own beside the pack (never under kai_gitops.rules, so it is no rule's): one rule per static
# rule package, its violations. regorus spends its time per rule evaluated, not per query: the PR check's static
# scope needs 43 of the 74 shipped packages, and their `meta` (constants, but evaluated afresh every time) cost
# ~1.3 ms a cluster: ~3 instead of ~4.5 ms a cluster over 1,000 clusters (bench/static_answer.py).
#
# `whole` says the same as `answer` in one complete rule, which regorus evaluates without a query to parse and
# without building a partial object: ~0.8 of the cost of querying `answer` (bench/static_answer.py's
# answer_query), and `answer` still answers whenever `whole` is undefined.
STATIC_ANSWER_PACKAGE = "kai_gitops_internal_static_answer"


def add_static_answer(prepared: OwnedEngine, rules: dict[str, str]) -> StaticAnswer | None:
    """Add the static answer for the packages of `rules` (package -> rule id) to the prepared engine, before any
    clone (clones share the prepared rules); None, and the whole pack is queried as before, if regorus refuses it."""
    refs = {package: "data" + "".join(f'["{part}"]' for part in package.split(".")) for package in sorted(rules)}
    lines = [f"package {STATIC_ANSWER_PACKAGE}", "", "import rego.v1", ""]
    lines += [f'answer["{package}"] := {ref}.violations' for package, ref in refs.items()]
    lines += ["", "whole := {", *(f'\t"{package}": {ref}.violations,' for package, ref in refs.items()), "}"]
    try:
        prepared.engine.add_policy(f"<{STATIC_ANSWER_PACKAGE}>", "\n".join(lines) + "\n")
    except RuntimeError:
        return None
    return StaticAnswer(f"data.{STATIC_ANSWER_PACKAGE}.answer", dict(rules), f"data.{STATIC_ANSWER_PACKAGE}.whole")


def clone(prepared: OwnedEngine) -> OwnedEngine:
    """A copy of the prepared engine: rules and data shared, input and caches its own."""
    # attr-defined: regorus.pyi (0.9) does not declare Engine.clone, which the compiled extension has
    copy: regorus.Engine = prepared.engine.clone()  # type: ignore[attr-defined]
    return OwnedEngine(copy)


def eval_value(owned: OwnedEngine, query: str) -> tuple[bool, JSONValue]:
    """(defined, value) of a single-expression query; errors become one-line UserErrors."""
    try:
        text = owned.engine.eval_query_as_json(query)
    except RuntimeError as exc:
        raise rego_error(exc) from None
    # orjson: a fleet's answers (every rule's meta and violations, ~80 kB a cluster) decode 3x faster than with
    # json. It reads an integer past 64 bits as a float; a result reads no number but a path's list index.
    answer: JSONValue = orjson.loads(text)
    rows = list_at(expect_object(answer, "the query's answer"), "result")
    if not rows:
        return False, None
    expressions = list_at(expect_object(rows[0], "a result"), "expressions")
    return True, expect_object(expressions[0], "an expression")["value"]


def eval_rule(owned: OwnedEngine, rule: str) -> JSONValue:
    """The value of the rule at path `rule`, the string "<undefined>" when it is undefined."""
    try:
        text = owned.engine.eval_rule_as_json(rule)
    except RuntimeError as exc:
        raise rego_error(exc) from None
    answer: JSONValue = orjson.loads(text)
    return answer


def static_answer(owned: OwnedEngine, static: StaticAnswer) -> JSONValue:
    whole = eval_rule(owned, static.whole)
    return whole if isinstance(whole, dict) else eval_value(owned, static.query)[1]


def read_metas(engine: OwnedEngine, files: list[PolicyFile], budget: RegoBudget | None = None) -> dict[str, JSONValue]:
    """Every rule package's `meta`. One clone answers them all: `meta` reads no input, and a fresh clone per
    package prepared the pack 50 times (~0.1 s of every run's start-up). With a budget, in a child process:
    a `meta` is Rego too."""
    if budget is not None:
        answer = run_within(budget, "reading the policies' meta", lambda: orjson.dumps(read_metas(engine, files)))
        return expect_object(orjson.loads(answer), "the policies' meta")
    metas: dict[str, JSONValue] = {}
    reader = clone(engine)
    for package in sorted({f.package for f in files if is_rule_package(f.package)}):
        defined, value = eval_value(reader, f"data.{package}.meta")
        if defined:
            metas[package] = value
    return metas


class RegorusEngine:
    """Reuses the compiled pack through one kept clone, with each evaluation's input set afresh.

    Kept, not cloned per evaluation: a new clone prepares the rules again on its first query (~3 of the
    ~5 ms a cluster's check costs), and `set_input_json` replaces the input entirely, so a kept engine
    gives the same results (tests/yamlio/test_fast_paths.py compares them in any order). regorus engines are
    bound to the thread that made them (pyo3 "unsendable"), so there is no sharing between threads to
    guard against; `OwnedEngine` frees them there even when another thread collects them.
    """

    def __init__(self, policy_set: PolicySet) -> None:
        self._set = policy_set
        if policy_set.compiled is None:
            raise ValueError("the embedded engine needs the compiled pack: load the set with load_policy_set()")
        self._prepared = policy_set.compiled
        self._warm: OwnedEngine | None = None

    def evaluate(self, facts: Mapping[str, JSONLike]) -> list[PolicyResult]:
        scope = facts_scope(facts)
        static = self._set.static_answer
        if scope == Scope.STATIC and static is not None:
            return collect_static_results(self.static_tree(facts, static), self._set, static)
        return collect_results(self.evaluate_tree(facts), self._set, scope)

    def static_tree(self, facts: Mapping[str, JSONLike], static: StaticAnswer) -> JSONValue:
        return self._answer(facts, lambda engine: static_answer(engine, static))

    def evaluate_tree(self, facts: Mapping[str, JSONLike], query: str = RULES_QUERY) -> JSONValue:
        return self._answer(facts, lambda engine: eval_value(engine, query)[1])

    def _answer(self, facts: Mapping[str, JSONLike], ask: Callable[[OwnedEngine], JSONValue]) -> JSONValue:
        engine, self._warm = self._warm or clone(self._prepared), None  # a failed evaluation keeps none
        # JSON, not Python objects: regorus turns Python True into the number 1. orjson: a 5,000-node
        # cluster's facts serialise in ~2 ms instead of ~12 ms.
        engine.engine.set_input_json(orjson.dumps(facts).decode())
        tree = ask(engine)
        self._warm = engine
        return tree or {}


class BudgetedRegorusEngine(RegorusEngine):
    """The embedded engine for untrusted policies: every evaluation in a child process under `budget`
    (budget.py). The fork inherits the compiled pack, so the child clones it as the in-process engine does."""

    def __init__(self, policy_set: PolicySet, budget: RegoBudget) -> None:
        super().__init__(policy_set)
        self._budget = budget

    def static_tree(self, facts: Mapping[str, JSONLike], static: StaticAnswer) -> JSONValue:
        return self.evaluate_tree(facts, static.query)

    def evaluate_tree(self, facts: Mapping[str, JSONLike], query: str = RULES_QUERY) -> JSONValue:
        payload = orjson.dumps(facts).decode()

        def work() -> bytes:
            engine = clone(self._prepared)
            engine.engine.set_input_json(payload)
            _, tree = eval_value(engine, query)
            return orjson.dumps(tree or {})

        what = f"evaluating the policies for cluster {facts.get('cluster', '?')}"
        answer: JSONValue = orjson.loads(run_within(self._budget, what, work))
        return answer
