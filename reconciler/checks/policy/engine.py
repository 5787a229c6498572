"""Choosing and preparing an engine: load the Rego pack (compiled once) and pick regorus or an OPA server.

The types both engines share live in pack.py, below this module, so the engines never import it back.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.checks.policy.budget import RegoBudget
from reconciler.checks.policy.pack import (
    SHIPPED_LABEL,
    PolicyDir,
    PolicyEngine,
    PolicySet,
    check_duplicate_meta,
    collect_policy_files,
    index_rules,
    merge_data_files,
    shipped_data_files,
    shipped_policy_dir,
)
from reconciler.checks.policy.regorus_engine import add_static_answer, compile_policies, read_metas
from reconciler.core.jsonvalue import JSONValue
from reconciler.findings.rules import RuleMeta, Scope


def load_policy_set(
    dirs: list[PolicyDir] | None = None,
    data_files: list[Path] | None = None,
    *,
    include_shipped: bool = True,
    budget: RegoBudget | None = None,
) -> PolicySet:
    """The shipped pack plus the user's policy dirs and data files, compiled once and checked; with a
    `budget` (untrusted policies), their `meta` is read in a budgeted child process."""
    roots = ([(shipped_policy_dir(), SHIPPED_LABEL)] if include_shipped else []) + [
        d if isinstance(d, tuple) else (Path(d), str(d)) for d in dirs or []
    ]
    files = collect_policy_files(roots, tests=False)
    data = merge_data_files((shipped_data_files() if include_shipped else []) + list(data_files or []))
    check_duplicate_meta(files)
    compiled = compile_policies(files, data)
    metas = read_metas(compiled, files, budget)
    rules, rule_files = index_rules(files, metas)
    static = {
        package: rule.id
        for package, raw in metas.items()
        if (rule := _rule_of(raw, rules)) is not None and rule.scope is Scope.STATIC
    }
    return PolicySet(tuple(files), data, rules, rule_files, compiled, add_static_answer(compiled, static))


def _rule_of(raw: JSONValue, rules: dict[str, RuleMeta]) -> RuleMeta | None:
    """The rule whose `meta` is `raw`, None when it is no rule's."""
    return rules.get(str(raw.get("id"))) if isinstance(raw, dict) else None


def make_engine(
    policy_set: PolicySet,
    *,
    opa_url: str | None = None,
    opa_token: str | None = None,
    opa_ca: Path | None = None,
    opa_timeout: float = 10.0,
    opa_preloaded: bool = False,
    budget: RegoBudget | None = None,
) -> PolicyEngine:
    """The embedded regorus engine (each evaluation in a budgeted child process with `budget`), or an OPA
    server when `opa_url` is given (bounded by `opa_timeout`; its memory is the server's)."""
    if opa_url:
        from reconciler.checks.policy.opa_engine import OpaEngine

        return OpaEngine(policy_set, opa_url, token=opa_token, ca=opa_ca, timeout=opa_timeout, preloaded=opa_preloaded)
    from reconciler.checks.policy.regorus_engine import BudgetedRegorusEngine, RegorusEngine

    return RegorusEngine(policy_set) if budget is None else BudgetedRegorusEngine(policy_set, budget)
