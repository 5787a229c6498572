"""Markdown (PR/MR comment, job summary, issue bodies): parsed back with markdown-it (GFM tables, HTML on).

User text must stay text: no HTML element, link, image, mention or table cell it did not come with.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

from reconciler.outputs import markdown_format, render
from reconciler.outputs.markdown_format import MARKER, code_block, escape_markdown, finding_details, inline_code
from reconciler.report.report import Report
from tests.support.outputs_shared import HOSTILE, sample_findings


def tokens(text: str) -> list[Any]:
    md = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    flat = []
    for token in md.parse(text):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def test_escaped_text_renders_as_the_same_characters() -> None:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    html = md.renderInline(escape_markdown(HOSTILE))
    assert "<img" not in html and "<a " not in html and "<strong>" not in html and "<code>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "@\u200badmin" in html and "#\u200b1" in html  # no mention, no issue link
    assert "evil|&lt;img" in html and "**bold** [link](http://x)" in html


def test_no_user_html_links_or_images_reach_the_comment(report: Report) -> None:
    text = render(report, "markdown")
    for token in tokens(text):
        if token.type in ("html_inline", "html_block"):
            rest = re.sub(r"</?(details|summary|b)>|<!-- kai-gitops-report -->", "", token.content)
            assert "<" not in rest, token.content
        assert token.type not in ("image", "link_open"), token
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<img" not in html and "<a " not in html  # inside a code fence it shows as text


def test_table_rows_keep_their_cells(report: Report) -> None:
    text = render(report, "markdown")
    rows = [t for t in tokens(text) if t.type == "tr_open"]
    assert rows
    md = MarkdownIt("commonmark").enable("table")
    html = md.render(text)
    for row in html.split("<tr>")[1:]:
        cells = row.count("<td>") + row.count("<th>")
        assert cells in (4, 8), row


def test_summary_table_per_cluster_and_details_per_finding(report: Report) -> None:
    text = render(report, "markdown")
    assert text.startswith(MARKER)
    assert "## kai-gitops check: ❌ failed" in text
    assert "**4 problems** (6 findings): 3 error(s)" in text
    assert "| prod-addon | 2 | 2 | 1 | 0 | 1 | 0 | unhealthy |" in text
    assert "| edge-clean | 0 | 0 | 0 | 0 | 0 | 0 | — |" in text
    # one entry per problem: the stale queue's three rules share one row and one <details>
    assert "| 🔴 error | KAI-D-002, KAI-Q-011, NVCA-H-002 | environments/prod.yaml:26:5 |" in text
    assert "Also **KAI-Q-011**: Queue default-parent-queue is limited" in text
    assert text.count("<details>") == text.count("</details>") == len(sample_findings()) + 1 - 2
    assert "(waived)" in text and "waived: lab experiment" in text


def test_plan_excerpt_lists_drift_with_its_change(report: Report) -> None:
    text = render(report, "markdown")
    assert "**Plan**" in text
    assert "~ Queue/default-parent-queue  KAI-D-002\n    cpu.quota: 0 → -1" in text


def test_commands_are_fenced_so_backticks_cannot_close_them() -> None:
    hostile = sample_findings()[4]
    block = finding_details(hostile)
    assert "````sh\necho '" in block and "```\n````" in block
    assert code_block("a ```` b").startswith("`````")
    assert inline_code("`x`") == "`` `x` ``"


def test_links_point_at_the_commit_when_the_host_can_build_them(report: Report) -> None:
    def link(path: str, line: int | None) -> str:
        return f"https://git.example/blob/abc/{path}#L{line}"

    text = markdown_format.render(report.redacted(), link=link)  # the options the registry does not pass
    assert "[environments/prod.yaml:26:5](https://git.example/blob/abc/environments/prod.yaml#L26)" in text
    for token in tokens(text):
        if token.type == "link_open":
            assert token.attrs["href"].startswith("https://git.example/blob/abc/")


def test_limit_truncates_at_a_boundary_with_a_note(report: Report) -> None:
    full = render(report, "markdown")
    cut = markdown_format.render(report.redacted(), limit=len(full.encode()) // 2)
    assert len(cut.encode()) <= len(full.encode()) // 2
    assert "**Truncated**" in cut
    assert cut.count("<details>") == cut.count("</details>")
    assert cut.count("```") % 2 == 0


def test_a_clean_report_passes() -> None:
    from reconciler.report.report import ClusterReport

    text = render(Report("check", [ClusterReport("one")]), "markdown")
    assert "✅ passed" in text and "No findings." in text
