"""The project stands on its own: nothing in it cites the planning material kept outside the repository.

Rule sources, comments and docs point at the project's own pages (docs/) or at upstream sources (NVCA, the KAI
chart, the NVCF user guide by section title); a reference to the planning notes would reach reports and readers
who cannot follow it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Built from parts so that this file does not match itself.
FORBIDDEN = ("SPEC" + " §", "SPEC" + ".md", ".." + "/shared")
# A section number without the sign (the notes' name, a space, "4.2") cites the same notes.
SECTION = re.compile("SPEC" + r" ?§?\d")
# Upstream data copied byte for byte; it is not ours to edit. What the project wrote there is checked: the test
# chart, and SOURCES.md, which says where each copy came from.
EXEMPT = ("tests/fixtures/",)
OURS_IN_EXEMPT = ("tests/fixtures/charts/kai-trap/", "tests/fixtures/SOURCES.md")


def _project_files() -> list[str]:
    """Tracked files, plus new ones not ignored yet, so a reference is caught before it is committed."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    return sorted(
        {
            name
            for name in listed.decode().split("\0")
            if name and (not name.startswith(EXEMPT) or name.startswith(OURS_IN_EXEMPT))
        }
    )


def test_no_file_cites_the_planning_material_outside_the_repo() -> None:
    hits = []
    for name in _project_files():
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        if not any(needle in text for needle in FORBIDDEN) and not SECTION.search(text):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            found = [needle for needle in FORBIDDEN if needle in line] + SECTION.findall(line)
            if found:
                hits.append(f"{name}:{number}: {', '.join(found)}: {line.strip()[:100]}")
    assert not hits, (
        "these cite planning material outside the repository; point at docs/ or the upstream "
        "source instead:\n" + "\n".join(hits)
    )


def test_the_check_sees_the_whole_tree() -> None:
    # Guards the listing itself: an empty or partial list would pass the check above vacuously.
    files = set(_project_files())
    assert {
        "README.md",
        "docs/policies.md",
        "policies/kai_gitops/rules/queues/kai_q_001.rego",
        "reconciler/findings/builtin_rules.py",
        "deploy/base/rbac-read.yaml",
    } <= files
    assert {"tests/fixtures/SOURCES.md", "tests/fixtures/charts/kai-trap/templates/default-queues.yaml"} <= files
    assert not [name for name in files if name.startswith(EXEMPT) and not name.startswith(OURS_IN_EXEMPT)]
