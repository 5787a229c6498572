"""The embedded engine: regorus (Rego in Rust), prepared once and cloned per evaluation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson
import regorus

from reconciler.checks.policy.pack import (
    RULES_QUERY,
    PolicyFile,
    PolicyResult,
    PolicySet,
    collect_results,
    facts_scope,
    is_rule_package,
)
from reconciler.errors import UserError

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
    message = found.group(1).strip() if found else next((ln.strip() for ln in text.splitlines() if ln.strip()),
                                                        type(exc).__name__)
    where = f"{location.group(1)}:{location.group(2)}:{location.group(3)}" if location else None
    return UserError(f"{context}{message}", where=where)


def compile_policies(files: list[PolicyFile], data: Mapping[str, Any]) -> regorus.Engine:
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
    return engine


def eval_value(engine: regorus.Engine, query: str) -> tuple[bool, Any]:
    """(defined, value) of a single-expression query; errors become one-line UserErrors."""
    try:
        raw = json.loads(engine.eval_query_as_json(query))
    except RuntimeError as exc:
        raise rego_error(exc) from None
    rows = raw.get("result") or []
    if not rows:
        return False, None
    return True, rows[0]["expressions"][0]["value"]


def read_metas(engine: regorus.Engine, files: list[PolicyFile]) -> dict[str, Any]:
    metas: dict[str, Any] = {}
    for package in sorted({f.package for f in files if is_rule_package(f.package)}):
        defined, value = eval_value(engine.clone(), f"data.{package}.meta")
        if defined:
            metas[package] = value
    return metas


class RegorusEngine:
    """Reuses the compiled pack; each evaluation works on a clone so concurrent callers never share input."""

    def __init__(self, policy_set: PolicySet) -> None:
        self._set = policy_set
        self._prepared: regorus.Engine = policy_set.compiled

    def evaluate(self, facts: Mapping[str, Any]) -> list[PolicyResult]:
        scope = facts_scope(facts)
        return collect_results(self.evaluate_tree(facts), self._set, scope)

    def evaluate_tree(self, facts: Mapping[str, Any]) -> Any:
        engine = self._prepared.clone()
        # JSON, not Python objects: regorus turns Python True into the number 1. orjson: a 5,000-node
        # cluster's facts serialise in ~2 ms instead of ~12 ms.
        engine.set_input_json(orjson.dumps(facts).decode())
        _, tree = eval_value(engine, RULES_QUERY)
        return tree or {}
