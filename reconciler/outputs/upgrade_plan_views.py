"""An upgrade plan (checks/upgrade_plan.py) as text, Markdown (a pull request comment) and JSON.

Not a report format: a plan has no findings, so it is not in FORMATS; `kai-gitops upgrade-plan -o` picks one
of these. Markdown escapes every value as the report's Markdown does, and JSON is the house JSON.
"""

from __future__ import annotations

from collections.abc import Callable

from reconciler.checks.upgrade_plan import PlanItem, Section, UpgradePlan
from reconciler.core.printable import visible
from reconciler.outputs.json_format import dumps
from reconciler.outputs.markdown_format import escape_markdown, inline_code

PLAN_VIEWS = ("text", "markdown", "json")
MARKER = "<!-- kai-gitops-upgrade-plan -->"  # lets a host find and update its own comment

_TITLES = {
    Section.KEYS: "Your values the target renames, removes or reinterprets",
    Section.DEFAULTS: "Chart defaults that change (values you do not set)",
    Section.CONFIG: "kai-config fields the target adds or drops",
    Section.SHARD: "Default shard plugins and actions",
    Section.CRDS: "CRD changes",
    Section.UPCOMING: "Changes on KAI main, in no release yet, that touch your values",
    Section.REMINDERS: "What no chart upgrade does",
}


def render_plan(plan: UpgradePlan, view: str) -> str:
    renderers: dict[str, Callable[[UpgradePlan], str]] = {
        "text": render_text,
        "markdown": render_markdown,
        "json": render_json,
    }
    # the last net before any view, as `render` is for reports: the values quoted are redacted where they stand
    return renderers[view](plan.redacted())


def render_json(plan: UpgradePlan) -> str:
    return dumps({"schemaVersion": 1, "kind": "UpgradePlan", **plan.to_dict()})


def render_text(plan: UpgradePlan) -> str:
    lines = [
        f"kai-gitops upgrade-plan — cluster {plan.cluster} ({plan.mode}): KAI chart {plan.current} → {plan.target}"
    ]
    lines += [f"  note: {note}" for note in plan.notes]
    if not plan.items:
        lines.append("Nothing to change: the pin is already at the target release.")
        return "\n".join(visible(line) for line in lines) + "\n"
    for section in Section:
        items = plan.section(section)
        if not items:
            continue
        lines += ["", f"{_TITLES[section]}:"]
        shown, added = _split_added(items)
        for item in shown:
            mark = "!" if item.must_change else "-"
            where = f" {item.location.file}:{item.location.line}:{item.location.column}" if item.location else ""
            lines.append(f"  {mark} {item.subject}{where}: {item.text}")
            lines.append(f"      source: {item.source}")
        if added:
            lines.append(
                f"  - {len(added)} new value(s), each at its default: "
                + ", ".join(f"{item.subject}={item.text.removeprefix('new, default ')}" for item in added)
            )
            lines.append(f"      source: {added[0].source}")
    lines += ["", "Steps, in order:"]
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"  {number}. {step.text}")
        lines.append(f"      source: {step.source}")
    lines += ["", _verdict(plan, "!", "above")]
    return "\n".join(visible(line) for line in lines) + "\n"


def render_markdown(plan: UpgradePlan) -> str:
    out = [
        MARKER,
        f"### KAI upgrade plan: {escape_markdown(plan.cluster)} "
        f"{inline_code(plan.current)} → {inline_code(plan.target)}",
        "",
    ]
    out += [f"> {escape_markdown(note)}" for note in plan.notes]
    if not plan.items:
        return "\n".join([*out, "", "Nothing to change: the pin is already at the target release.", ""])
    out += ["", f"**{escape_markdown(_verdict(plan, '❗', 'below'))}**"]
    for section in Section:
        items = plan.section(section)
        if not items:
            continue
        out += [
            "",
            f"#### {escape_markdown(_TITLES[section])}",
            "",
            "| | key or field | what changes | source |",
            "|---|---|---|---|",
        ]
        shown, added = _split_added(items)
        out += [_row(item) for item in shown]
        if added:
            listed = ", ".join(
                f"{inline_code(item.subject)}={escape_markdown(item.text.removeprefix('new, default '))}"
                for item in added
            )
            out.append(
                f"| | {len(added)} new value(s) | each at its default: {listed} | {escape_markdown(added[0].source)} |"
            )
    out += ["", "#### Steps, in order", ""]
    out += [
        f"{n}. {escape_markdown(step.text)} <sub>({escape_markdown(step.source)})</sub>"
        for n, step in enumerate(plan.steps, 1)
    ]
    return "\n".join(out) + "\n"


def _split_added(items: list[PlanItem]) -> tuple[list[PlanItem], list[PlanItem]]:
    """New chart values at their defaults are many and rarely matter one by one: they are shown on one line."""
    added = [item for item in items if item.section is Section.DEFAULTS and item.kind == "added"]
    return [item for item in items if item not in added], added


def _row(item: PlanItem) -> str:
    mark = "❗" if item.must_change else ""
    where = f" ({escape_markdown(f'{item.location.file}:{item.location.line}')})" if item.location else ""
    return (
        f"| {mark} | {inline_code(item.subject)}{where} | {escape_markdown(item.text)} | "
        f"{escape_markdown(item.source)} |"
    )


def _verdict(plan: UpgradePlan, mark: str, where: str) -> str:
    """`where` the changes are from the verdict: the text view ends with it, the markdown view leads with it."""
    if plan.changes_needed:
        count = sum(item.must_change for item in plan.items)
        return f"Git must change before the upgrade: {count} value(s) marked {mark}."
    return f"No value in Git must change before the upgrade; read the changes {where}."
