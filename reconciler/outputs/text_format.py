"""Human report: a Terraform-style plan of drift, then violations, then NVCA's predicted verdict.

Colour only on a terminal; the words carry the meaning, so a log file reads the same without it. Every value
passes through `_escape`: control characters visible, rich markup inert.
"""

from __future__ import annotations

import io
import json
import re
from typing import TYPE_CHECKING

from reconciler.core.printable import visible
from reconciler.core.show import show_value
from reconciler.findings.attribution import attribution_lines, who_set_it
from reconciler.findings.builtin_rules import lists_changes
from reconciler.findings.finding import Action, Finding
from reconciler.findings.problems import Problem, group_problems
from reconciler.findings.rules import DoctorList
from reconciler.report.history import age_note
from reconciler.report.report import ClusterReport, Report, finding_order

if TYPE_CHECKING:
    from rich.console import Console

_SIGN = {Action.CREATE: ("+", "green"), Action.UPDATE: ("~", "yellow"), Action.NONE: ("!", "magenta")}
_SEVERITY = {"error": "red", "warning": "yellow", "info": "cyan"}
# A list of quoted strings in a message, as rules print them (["SelfHosted","LogPosting",…]); its items.
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_STRING_LIST = re.compile(rf"\[{_STRING}(?:, ?{_STRING})*\]")
_ITEM = re.compile(_STRING)
LIST_KEPT = 3  # items of a long list a person reads; JSON and SARIF keep every one


def render(report: Report, *, color: bool | None = None) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer, force_terminal=bool(color), no_color=not color, width=120, highlight=False, soft_wrap=True
    )
    if report.repository:
        console.print(f"[bold]kai-gitops {report.command}[/] — this run (waivers, policy changes)")
        _violations(console, group_problems(sorted(report.repository, key=finding_order)))
        console.print()
    for cluster in report.clusters:
        _cluster(console, report.command, cluster)
    if len(report.clusters) > 1:
        console.print(_totals(report))
    return buffer.getvalue()


def _cluster(console: Console, command: str, c: ClusterReport) -> None:
    subject = "live state" if c.unnamed_live else f"cluster [bold]{_escape(c.cluster)}[/]"
    console.print(f"[bold]kai-gitops {command}[/] — {subject}")
    if c.git:
        console.print(f"  desired: {_escape(c.git.repo)} @ {_escape(c.git.ref)} ({c.git.short_commit})")
    elif c.live_source:
        console.print("  desired: not read (no --repo): only the live checks ran")
    if c.live_source:
        console.print(f"  live:    {_escape(c.live_source)}")
    findings = sorted(c.findings, key=finding_order)
    problems = group_problems(f for f in findings if f.waived_by is None)
    drift = [p for p in problems if p.is_drift]
    violations = [p for p in problems if not p.is_drift]
    waived = [f for f in findings if f.waived_by is not None]
    if drift:
        console.print("\n[bold]Drift[/] (live differs from Git):")
        for problem in drift:
            _drift(console, problem.lead)
            _also(console, problem, "      ")
    if violations:
        console.print("\n[bold]Violations[/]:")
        _violations(console, violations)
    if waived:
        console.print(f"\n[dim]Waived: {len(waived)} finding(s)[/]")
        for f in waived:
            text = f"{f.rule_id} {f.subject or ''} — waiver {f.waived_by}"
            console.print(f"  [dim]{_escape(text)}[/]")
    if command == "doctor":
        _checks(console, c, DoctorList.KAI, "[bold]KAI[/] (kai-config and what the operator deployed):")
        _checks(console, c, DoctorList.GANGS, "[bold]Gangs[/] (PodGroups, Pending members, topology prerequisites):")
    if c.nvca is not None:
        colour = "green" if c.nvca.healthy else "red"
        console.print(f"\n[bold]NVCA prediction[/] kai-scheduler-queues: [{colour}]{c.nvca.status}[/]")
        for error in c.nvca.errors:
            console.print(f"  {_escape(error)}")
    # A plan needs both sides: Git and a live cluster.
    console.print("\n" + _summary_line(c, with_plan=c.git is not None and c.live_source is not None) + "\n")


def _checks(console: Console, c: ClusterReport, section: DoctorList, heading: str) -> None:
    """Each check of a doctor section that ran (the rules whose metadata lists them there): ✓ with its title, or
    ✗ with each finding's evidence and fix."""
    ran = [r for r in c.rules if r.listed_in is section]
    if not ran:
        return
    console.print("\n" + heading)
    active = [f for f in c.findings if f.waived_by is None]
    for rule in ran:
        failed = [f for f in active if f.rule_id == rule.id]
        mark = "[red]✗[/]" if failed else "[green]✓[/]"
        console.print(f"  {mark} {_escape(rule.title)} [dim]{_escape(rule.id)}[/]")
        for f in failed:
            console.print(f"      {_message(f.message)}")
            if f.fix and f.fix.command:
                console.print(f"      [dim]run:[/] {_escape(f.fix.command)}")


def _drift(console: Console, f: Finding) -> None:
    action = f.fix.action if f.fix else Action.NONE
    sign, colour = _SIGN[action]
    where = f"  [dim]{_escape(str(f.location))}[/]" if f.location else ""
    console.print(f"  [{colour}]{sign}[/] {_escape(str(f.subject or ''))} [dim]{_escape(f.rule_id)}[/]{where}")
    _age(console, f, "      ")
    changes = f.changes if lists_changes(f.rule_id) else ()
    setters = {entry.field: entry for entry in f.attribution}
    if changes:
        whos = [who_set_it(setters[c.shown]) if c.shown in setters else "" for c in changes]
        shared = whos[0] if len(changes) > 1 and whos[0] and len(set(whos)) == 1 else None
        for change, who in zip(changes, whos, strict=True):
            said = f", {who}" if who and not shared else ""
            console.print(
                f"      {_escape(change.shown):<22} {_value(change.live)} → {_value(change.want)}{_escape(said)}"
            )
        if shared:  # one writer set them all (Helm's install, usually): said once
            console.print(f"      [dim]each {_escape(shared)}[/]")
        if f.extra.get("note"):
            console.print(f"      [dim]{_escape(f.extra['note'])}[/]")
    elif action is Action.CREATE and f.fix and f.fix.patch:
        for line in json.dumps(f.fix.patch.get("spec", {}), sort_keys=True).split("\n"):
            console.print(f"      spec: {_escape(line)}")
    else:
        console.print(f"      {_message(f.message)}")
    shown = {c.shown for c in changes}
    rest = tuple(entry for field, entry in setters.items() if field not in shown)
    for line in attribution_lines(rest):  # the field's name only: the message above gave its values
        console.print(f"      [dim]{_escape(line)}[/]")
    if f.last_write:
        console.print(f"      [{'bold' if f.last_write.by_person else 'dim'}]{_escape(f.last_write.shown())}[/]")
    elif f.no_write_found:
        console.print(f"      [dim]{_escape(f.no_write_found.sentence())}[/]")
    if f.fix and f.fix.command:
        console.print(f"      [dim]run:[/] {_escape(f.fix.command)}")


def _violations(console: Console, problems: list[Problem]) -> None:
    """One entry per problem: the leading finding in full, the other rules that report it listed under it."""
    for problem in problems:
        f = problem.lead
        colour = _SEVERITY[problem.severity.value]
        place = f.location or f.subject
        where = f" [dim]{_escape(str(place))}[/]" if place else ""
        rules = " + ".join(problem.rule_ids)
        console.print(f"  [{colour}]{problem.severity.value.upper():<7}[/] {_escape(rules)}{where}")
        console.print(f"          {_message(f.message)}")
        for line in attribution_lines(f.attribution, f.live, f.desired):
            console.print(f"          [dim]{_escape(line)}[/]")
        _age(console, f, "          ")
        _also(console, problem, "          ")
        if f.fix and (f.fix.command or f.fix.description):
            console.print(f"          [dim]fix:[/] {_escape(f.fix.command or f.fix.description)}")


def _age(console: Console, f: Finding, indent: str) -> None:
    note = age_note(f)
    if note:
        console.print(f"{indent}[dim]{_escape(note)}[/]")


def _also(console: Console, problem: Problem, indent: str) -> None:
    for other in problem.also:
        console.print(f"{indent}[dim]also {_escape(other.rule_id)}:[/] {_message(other.message)}")


def _summary_line(c: ClusterReport, *, with_plan: bool) -> str:
    s = c.summary()
    plan = (
        f"Plan: {s['to_create']} to create, {s['to_update']} to change, {s['operator_actions']} for the operator."
        if with_plan
        else ""
    )
    checks = f"Violations: {s['errors']} error(s), {s['warnings']} warning(s), {s['info']} info"
    waived = f", {s['waived']} waived" if s["waived"] else ""
    return f"{_problems(s)}. {plan} {checks}{waived}.".replace("  ", " ")


def _totals(report: Report) -> str:
    total = report.totals()
    waived = f", {total['waived']} waived" if total["waived"] else ""
    return (
        f"All clusters: {len(report.clusters)} checked, {_problems(total)}: {total['errors']} error(s), "
        f"{total['warnings']} warning(s), {total['info']} info{waived}."
    )


def _problems(summary: dict[str, int]) -> str:
    """ "4 problems (9 findings)": what to fix, and how many rule results say so."""
    problems, findings = summary["problems"], summary["findings"]
    return f"{problems} problem{'s' if problems != 1 else ''} ({findings} finding{'s' if findings != 1 else ''})"


def _value(value: object) -> str:
    return _escape(show_value(value))  # "<none>" and Go's floats hold no markup


def _message(text: str) -> str:
    return _escape(elide_lists(text))


def elide_lists(text: str, kept: int = LIST_KEPT) -> str:
    """Each list of quoted strings longer than `kept` + 2 items cut to its first `kept`, with a count of the rest:
    two 11-gate lists in full made one finding a paragraph."""

    def cut(match: re.Match[str]) -> str:
        items = _ITEM.findall(match.group())
        if len(items) <= kept + 2:
            return match.group()
        return f"[{','.join(items[:kept])}, … and {len(items) - kept} more]"

    return _STRING_LIST.sub(cut, text)


def _escape(text: str) -> str:
    """A value as printed: control characters visible (a name with a newline or ESC in it cannot start a
    line or a terminal sequence), then rich markup escaped."""
    from rich.markup import escape

    return escape(visible(text))
