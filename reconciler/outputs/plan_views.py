"""`reconcile`'s run in the formats that have a form of it (`render_run` in the registry): text is the plan in
Terraform's shape (plan_text.py), JSON the diff report (same keys, same `summary`) with `plan` and `apply`
added, Markdown the report with the plan and the apply as sections. Every other format renders the run's
final report. This module leans on the text, JSON and Markdown formats on purpose: each view is theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reconciler.checks.waves import WaveDecision
from reconciler.core.exits import ExitCode
from reconciler.core.jsonvalue import JSONLike
from reconciler.outputs.json_format import dumps
from reconciler.outputs.markdown_format import code_block, inline_code
from reconciler.outputs.markdown_format import render as render_markdown
from reconciler.outputs.plan_text import render_apply, render_plan, render_reconcile
from reconciler.plans.applied import ApplyResult
from reconciler.plans.plan import Plan
from reconciler.report.report import Report


@dataclass(frozen=True)
class PlanRun:
    """What one `reconcile` run shows."""

    report: Report  # the diff before any change
    plan: Plan
    applied: ApplyResult | None  # None: a plan only
    after: Report | None  # the cluster read again after a successful apply
    exit_code: ExitCode
    waves: WaveDecision | None = None  # the rollout's say on this run, when kai-gitops.yaml has waves

    @property
    def final(self) -> Report:
        return self.after or self.report

    def redacted(self) -> PlanRun:
        return replace(
            self, report=self.report.redacted(), after=self.after.redacted() if self.after is not None else None
        )


def as_text(run: PlanRun, *, color: bool | None = None) -> str:
    text = render_reconcile(run.report, run.plan, run.applied, run.after)
    return text if (line := _rollout_line(run)) is None else f"{text.rstrip()}\n{line}\n"


def _rollout_line(run: PlanRun) -> str | None:
    """The waves' say, unless the plan's own note already gives it (a held run)."""
    if run.waves is None or any(note.startswith("rollout: ") for note in run.plan.notes):
        return None
    return f"rollout: {run.waves.reason}"


def as_json(run: PlanRun, *, color: bool | None = None) -> str:
    return dumps(_document(run))


def as_jsonl(run: PlanRun, *, color: bool | None = None) -> str:
    return dumps(_document(run), compact=True)


def as_markdown(run: PlanRun, *, color: bool | None = None) -> str:
    """The final report as for `diff`, then the plan (and the apply) as the text shows them."""
    plan = "\n".join(line.removeprefix("  ") for line in render_plan(run.plan))  # `+`/`~` open the line for diff
    identity = " (no cluster identity: a snapshot)"
    if run.plan.identity:
        identity = f" for {inline_code(str(run.plan.identity))}"
    blocks = [
        render_markdown(run.final).rstrip("\n"),
        f"### Plan {inline_code(run.plan.id)}{identity}",
        code_block(plan, "diff"),
    ]
    if (line := _rollout_line(run)) is not None:
        blocks.append(line)
    if run.applied is not None:
        blocks += ["### Apply", code_block("\n".join(render_apply(run.applied)))]
    return "\n\n".join(blocks) + "\n"


def _document(run: PlanRun) -> dict[str, JSONLike]:
    data: dict[str, JSONLike] = dict(run.final.to_dict())
    data["exitCode"] = run.exit_code.value
    data["plan"] = run.plan.to_dict()
    data["apply"] = run.applied.to_dict() if run.applied is not None else None
    if run.waves is not None:
        data["waves"] = run.waves.to_dict()
    if run.after is not None:
        data["before"] = {"nvca": run.report.to_dict().get("nvca"), "summary": run.report.totals()}
    return data
