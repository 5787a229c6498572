"""A plan saved as versioned JSON (`reconcile --plan-out`) and read back (`--plan`), checked like any input.

Written with its id (a hash of its content) and read only if the id still matches and every change passes
validate.py: a saved plan is input a person may have edited, never trusted. The id proves nothing against an
editor (anyone can hash the edited content again), so the operator steps a saved plan shows for a person to
run are kept only when kai-gitops itself would write them now (`keep_planned_operator_steps`).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import orjson

from reconciler.core.capped import MAX_JSON_DEPTH, TooDeep, line_at, load_json, read_input
from reconciler.core.errors import UserError
from reconciler.core.files import OWNER_ONLY, write_atomically
from reconciler.core.jsonvalue import JSONArray, JSONObject, JSONValue
from reconciler.core.refs import ObjectRef
from reconciler.plans.plan import (
    PLAN_KIND,
    PLAN_VERSION,
    Change,
    ClusterIdentity,
    FieldChange,
    Operation,
    OperatorAction,
    Plan,
)
from reconciler.plans.validate import check_changes, check_text
from reconciler.report.report import GitInfo

log = logging.getLogger("kai_gitops.plans")
# A plan holds the changes of one reconcile: a few objects and up to the change cap's node labels, kilobytes to
# a few megabytes. Past this it is no plan, and is not read further.
PLAN_MAX_BYTES = 64 * 1024 * 1024


def write_plan(plan: Plan, path: str) -> None:
    """Atomically, so a reader never sees half a plan; owner-only, as it names the cluster's server."""
    data = orjson.dumps(plan.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    try:
        write_atomically(path, data, OWNER_ONLY)
    except OSError as exc:
        raise UserError(
            f"cannot write the plan: {exc.strerror}",
            where=path,
            hint="--plan-out takes a file in a writable directory, a FIFO or a character device",
        ) from None


def read_plan(path: str) -> Plan:
    raw = read_input(path, PLAN_MAX_BYTES, "plan")
    try:
        data = load_json(raw)
    except TooDeep as exc:
        raise UserError(
            f"plan nests deeper than {MAX_JSON_DEPTH} levels",
            where=f"{path}:{line_at(raw, exc.offset)}",
            hint="write one with `kai-gitops reconcile --plan-out FILE`",
        ) from None
    except orjson.JSONDecodeError as exc:
        raise UserError(f"plan is not JSON: {exc.msg}", where=f"{path}:{exc.lineno}:{exc.colno}") from None
    return plan_from_dict(data, path)


def keep_planned_operator_steps(saved: Plan, fresh: Plan, where: str) -> Plan:
    """`saved` with only the operator steps `fresh` (the planner, on this repository and cluster now) also has.

    A step is a command a person may copy and run, so one no planner wrote is never shown: it is left out with
    one warning naming the file and the steps' positions, never their text. The plan's id follows its content.
    """
    planned = set(fresh.operator)
    left_out = [str(i) for i, step in enumerate(saved.operator) if step not in planned]
    if not left_out:
        return saved
    kept = replace(saved, operator=tuple(step for step in saved.operator if step in planned))
    log.warning(
        "%s: left out %d operator step(s) of the saved plan (operator[%s]) that kai-gitops would not "
        "write for this repository and cluster now (the finding is gone, or the file was edited); their "
        "commands are not shown, and the plan applied is %s",
        where,
        len(left_out),
        ", ".join(left_out),
        kept.id,
    )
    return kept


def plan_from_dict(raw: JSONValue, where: str) -> Plan:
    """The plan a saved plan's JSON holds; UserError naming `where` for anything but a valid, unedited plan."""
    return _PlanReader(where).plan(raw)


def _keys(path: JSONValue) -> tuple[str, ...] | None:
    """A field's path: a non-empty list of keys, or None."""
    if not isinstance(path, list):
        return None
    keys = tuple(key for key in path if isinstance(key, str))
    return keys if keys and len(keys) == len(path) else None


class _PlanReader:
    """plan_from_dict with one-line errors naming the file and the entry: a hand-edited plan is bad input."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, what: str) -> UserError:
        return UserError(
            f"not a kai-gitops plan: {what}",
            where=self.where,
            hint="write one with `kai-gitops reconcile --plan-out FILE`",
        )

    def plan(self, raw: JSONValue) -> Plan:
        if not isinstance(raw, dict) or raw.get("kind") != PLAN_KIND:
            raise self.fail(f"`kind` must be {PLAN_KIND}")
        if raw.get("version") != PLAN_VERSION:
            raise UserError(
                f"plan version {raw.get('version')!r} is not supported (this kai-gitops reads version {PLAN_VERSION})",
                where=self.where,
                hint="re-create the plan with this version",
            )
        plan = Plan(
            self.text(raw, "cluster"),
            self.git(raw.get("git")),
            self.identity(raw.get("clusterIdentity")),
            tuple(self.change(c, i) for i, c in enumerate(self.items(raw, "changes"))),
            tuple(self.operator(o) for o in self.items(raw, "operator")),
            tuple(self.note(n) for n in self.items(raw, "notes", optional=True)),
        )
        if raw.get("id") != plan.id:
            raise UserError(
                f"plan id {raw.get('id')!r} does not match its content ({plan.id}): the file was "
                "edited after it was written",
                where=self.where,
                hint="re-create the plan",
            )
        check_changes(plan.changes, self.where)
        return plan

    def note(self, raw: JSONValue) -> str:
        if not isinstance(raw, str):
            raise self.fail("`notes` must be a list of strings")
        check_text(raw, "note", self.where)
        return raw

    def items(self, raw: JSONObject, key: str, *, optional: bool = False) -> JSONArray:
        value = raw.get(key)
        if value is None and optional:
            return []
        if not isinstance(value, list):
            raise self.fail(f"`{key}` must be a list")
        return value

    def text(self, raw: JSONValue, key: str) -> str:
        value = raw.get(key) if isinstance(raw, dict) else None
        if not isinstance(value, str) or not value:
            raise self.fail(f"`{key}` must be a non-empty string")
        return value

    def optional_text(self, raw: JSONObject, key: str) -> str | None:
        return None if raw.get(key) is None else self.text(raw, key)

    def git(self, raw: JSONValue) -> GitInfo | None:
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise self.fail("`git` must be an object")
        commit = raw.get("commit")
        if commit is not None and not isinstance(commit, str):
            raise self.fail("`git.commit` must be a string or null")
        return GitInfo(str(raw.get("repo", "")), str(raw.get("ref", "")), commit, bool(raw.get("worktree")))

    def identity(self, raw: JSONValue) -> ClusterIdentity | None:
        if raw is None:
            return None
        return ClusterIdentity(self.text(raw, "server"), self.text(raw, "kubeSystemUID"))

    def ref(self, raw: JSONValue) -> ObjectRef:
        if not isinstance(raw, dict):
            raise self.fail("`object` must be an object")
        return ObjectRef(
            self.text(raw, "apiVersion"),
            self.text(raw, "kind"),
            self.text(raw, "name"),
            self.optional_text(raw, "namespace"),
        )

    def change(self, raw: JSONValue, index: int) -> Change:
        if not isinstance(raw, dict):
            raise self.fail(f"changes[{index}] must be an object")
        try:
            operation = Operation(str(raw.get("operation")))
        except ValueError:
            raise self.fail(f"changes[{index}].operation must be create or update") from None
        fields = []
        for f in self.items(raw, "fields"):
            path = _keys(f.get("path")) if isinstance(f, dict) else None
            if path is None or not isinstance(f, dict):
                raise self.fail(f"changes[{index}].fields[].path must be a list of keys")
            fields.append(FieldChange(path, f.get("before"), f.get("after")))
        manifest = raw.get("manifest")
        if manifest is not None and not isinstance(manifest, dict):
            raise self.fail(f"changes[{index}].manifest must be an object or null")
        rules = self.items(raw, "rules", optional=True)
        return Change(
            self.ref(raw.get("object")),
            operation,
            tuple(fields),
            tuple(str(r) for r in rules),
            str(raw.get("reason") or ""),
            manifest,
        )

    def operator(self, raw: JSONValue) -> OperatorAction:
        if not isinstance(raw, dict):
            raise self.fail("`operator` entries must be objects")
        subject = self.ref(raw["subject"]) if raw.get("subject") else None
        command = raw.get("command")
        if command is not None and not isinstance(command, str):
            raise self.fail("`operator[].command` must be a string or null")
        return OperatorAction(str(raw.get("rule", "")), subject, str(raw.get("description") or ""), command)
