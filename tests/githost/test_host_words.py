"""Each host in its own words: every text kai-gitops writes about a fix proposal says pull request and `#N` on
GitHub, merge request and `!N` on GitLab (where `#N` links an issue); issues are `#N` on both."""

from __future__ import annotations

import re

import pytest

from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from reconciler.gitfix.branch import Author
from reconciler.gitfix.plan import FileChange, FixPlan
from reconciler.gitfix.pull_request import FixAction, FixContext, FixOutcome, _fixed_comment, render_fix_body
from reconciler.githost.base import WORDS, HostIssue, HostPull, HostSettings
from reconciler.publish.drift_issue import DriftAction, DriftOutcome

OWN = {"github": ("pull request", "#"), "gitlab": ("merge request", "!")}
PULL = HostPull(
    12, "t", "b", "open", (), "https://host.example/acme/gitops/12", "kai-gitops/fix/lab-0123abcd", "main", "mallory"
)


def texts(kind: str) -> list[str]:
    """Every host-facing text of a fix proposal and a drift issue a run writes on host `kind`."""
    words = WORDS[kind]
    lines = [
        FixOutcome("lab", action, PULL.head, PULL, pushed=True, closed=(3, 4), words=words).line()
        for action in FixAction
        if action is not FixAction.DRY_RUN
    ]
    lines.append(FixOutcome("lab", FixAction.CLOSED, closed=(3,), words=words).line())
    finding = Finding(
        "KAI-V-001",
        Kind.VIOLATION,
        Severity.WARNING,
        "placement is spread",
        "lab",
        fix=Fix(Action.NONE, "x"),
        title="KAI placement strategy is binpack",
    )
    ctx = FixContext("main", "0" * 40, Author.parse(None), words=words)
    lines.append(render_fix_body(FixPlan("lab", (finding,), (FileChange("v.yaml", b"a: 1\n", b"a: 2\n"),)), ctx))
    lines.append(render_fix_body(FixPlan("lab", (finding,), ()), ctx))  # a change too large to show
    lines.append(_fixed_comment("lab", ctx))
    return lines


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_every_fix_text_uses_the_hosts_own_words(kind: str) -> None:
    noun, sigil = OWN[kind]
    other_noun, other_sigil = OWN["gitlab" if kind == "github" else "github"]
    for text in texts(kind):
        assert noun in text and other_noun not in text, text
    joined = "\n".join(texts(kind))
    assert f"{sigil}12" in joined and f"closed {sigil}3, {sigil}4" in joined
    assert f"see the {'Files changed' if kind == 'github' else 'Changes'} tab" in joined
    if kind == "gitlab":
        assert not re.search(r"#\d", joined), "a merge request referred to as #N links an issue on GitLab"
    else:
        assert not re.search(rf"{other_sigil}\d", joined)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_the_settings_carry_the_hosts_words_and_an_issue_is_hash_n_on_both(kind: str) -> None:
    settings = HostSettings(kind, "https://host.example", "acme/gitops", "t")
    assert settings.words is WORDS[kind]
    assert settings.words.pull_ref(2) == f"{OWN[kind][1]}2" and settings.words.issue_ref(2) == "#2"
    issue = HostIssue(5, "t", "b", "open", (), "https://host.example/acme/gitops/issues/5")
    assert DriftOutcome("lab", DriftAction.OPENED, issue).line().startswith("drift issue #5 for lab: opened")
