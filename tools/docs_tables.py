"""The tables the docs keep of the code, generated from it: the Rego pack's rules (`policies/README.md`, from each
rule's `meta`), the built-in rules (`docs/policies.md`, from their `RuleMeta`) and the output formats
(`docs/outputs.md`, from the format registry). Each table sits between two markers in its file; nothing
outside them is touched. `tests/project/test_docs_tables.py` fails while a table is stale.

    .venv/bin/python tools/docs_tables.py           # rewrite the stale tables (or: make tables)
    .venv/bin/python tools/docs_tables.py --check   # exit 1 naming each stale table, write nothing
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's reconciler, not an installed one

from reconciler.checks.policy.engine import load_policy_set  # noqa: E402
from reconciler.checks.policy.pack import SHIPPED_LABEL  # noqa: E402
from reconciler.findings.builtin_rules import BY_ID  # noqa: E402
from reconciler.findings.rules import RuleMeta, Scope  # noqa: E402
from reconciler.outputs import FORMATS  # noqa: E402

COMMAND = "python tools/docs_tables.py"
_DOC_LINK = re.compile(r"docs/([\w-]+\.md)(#[\w-]+)?")


@dataclass(frozen=True)
class Table:
    name: str
    path: Path
    render: Callable[[], str]

    def markers(self) -> tuple[str, str]:
        return (
            f"<!-- generated: {self.name} (edit the code, then run `{COMMAND}`) -->",
            f"<!-- end generated: {self.name} -->",
        )

    def current(self) -> str:
        text = self.path.read_text()
        begin, end = self.markers()
        if text.count(begin) != 1 or text.count(end) != 1:
            raise SystemExit(f"{_shown(self.path)}: needs the markers {begin} and {end} once each")
        return text.split(begin, 1)[1].split(end, 1)[0]

    def wanted(self) -> str:
        return "\n" + self.render() + "\n"

    def write(self) -> None:
        begin, end = self.markers()
        head, rest = self.path.read_text().split(begin, 1)
        self.path.write_text(head + begin + self.wanted() + end + rest.split(end, 1)[1])


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _ordered(rules: Iterable[RuleMeta]) -> list[RuleMeta]:
    """Static rules first (the PR check's), then live; by id within each."""
    return sorted(rules, key=lambda meta: (meta.scope is not Scope.STATIC, meta.id))


def pack_rules() -> str:
    shipped = load_policy_set()
    rows = ["| id | severity | scope | title | file |", "|---|---|---|---|---|"]
    for meta in _ordered(shipped.rules.values()):
        file = shipped.rule_files[meta.id].removeprefix(f"{SHIPPED_LABEL}/")
        rows.append(f"| {meta.id} | {meta.severity.value} | {meta.scope.value} | {_cell(meta.title)} | `{file}` |")
    return "\n".join(rows)


def _section(source: str, page: str) -> str:
    """The first docs page section a rule's `source` names, as a link from `page`."""
    found = _DOC_LINK.search(source)
    if found is None:
        return ""
    target, anchor = found.group(1), found.group(2) or ""
    label = anchor.lstrip("#").replace("-", " ") or target.removesuffix(".md")
    if (target, anchor) == (page, "#rule-ids"):  # the table's own section
        return ""
    return f"[{label}]({anchor if target == page and anchor else target + anchor})"


def builtin_rules() -> str:
    rows = ["| id | severity | scope | title | more |", "|---|---|---|---|---|"]
    for meta in _ordered(BY_ID.values()):
        rows.append(
            f"| `{meta.id}` | {meta.severity.value} | {meta.scope.value} | {_cell(meta.title)} | "
            f"{_section(meta.source, 'policies.md')} |"
        )
    return "\n".join(rows)


def output_formats() -> str:
    rows = [
        "| format | what | alone on stdout | when the run stops on an error | `reconcile` |",
        "|---|---|---|---|---|",
    ]
    for name, entry in FORMATS.items():
        alone = "yes: stdout to itself, or a file" if entry.whole_document else "no"
        error = "the error, in this format" if entry.render_error else "nothing"
        run = "the plan and the apply" if entry.render_run else "the findings after the run"
        summary = entry.summary + (
            "; also appends the job summary to `$GITHUB_STEP_SUMMARY`" if entry.step_summary else ""
        )
        rows.append(f"| [`{name}`](#{name}) | {_cell(summary)} | {alone} | {error} | {run} |")
    return "\n".join(rows)


TABLES = (
    Table("pack rules", ROOT / "policies" / "README.md", pack_rules),
    Table("built-in rules", ROOT / "docs" / "policies.md", builtin_rules),
    Table("output formats", ROOT / "docs" / "outputs.md", output_formats),
)


def stale() -> list[Table]:
    return [table for table in TABLES if table.current() != table.wanted()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 naming each stale table; write nothing")
    args = parser.parse_args(argv)
    old = stale()
    if args.check:
        for table in old:
            print(f"{_shown(table.path)}: the {table.name} table is stale; run `{COMMAND}`")
        return 1 if old else 0
    for table in old:
        table.write()
        print(f"{_shown(table.path)}: the {table.name} table regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
