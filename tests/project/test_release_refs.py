"""Every Git ref of kai-gitops that a user copies exists: a line in the README, the docs, the CI templates, the
Action and component headers, the pre-commit hook or the alerts' runbook links names either the placeholder
`<release-tag>` (explained once, docs/ci.md#installing-kai-gitops) or a ref `git rev-parse` resolves here.
They all pinned `v0.1.0`, a tag this repository never had, and the Action's header `@v1`."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPIED = [
    "README.md",
    "CHANGELOG.md",
    "action.yml",
    ".pre-commit-hooks.yaml",
    "docs/**/*.md",
    "templates/*.yml",
    "repo-templates/ci/*",
    "reconciler/data/init/**/*",
    "deploy/**/*",
]
# Refs of kai-gitops itself; another project's ref (actions/checkout@v4) is that project's business.
REF_PATTERNS = [
    re.compile(r"git\+[^\s\"'`]*kai-gitops[^\s\"'`@]*@(?P<ref>[^\s\"'`#]+)"),  # pip / pipx VCS requirement
    re.compile(r"uses:\s*[^\s@]*kai-gitops@(?P<ref>[^\s\"'`]+)"),  # the GitHub Action
    re.compile(r"component:\s*\S*/kai-gitops-check@(?P<ref>[^\s\"'`]+)"),  # the GitLab component
    re.compile(r"^\s*#?\s*rev:\s*(?P<ref>[^\s#]+)", re.MULTILINE),  # the pre-commit hook
    re.compile(r"kai-gitops[^\s\"'`]*/(?:blob|tree)/(?P<ref>[^/\s\"'`]+)/"),  # links into the repository
]
PLACEHOLDER = re.compile(r"^(<[a-z-]+>|\$.*)$")


def copied_files() -> list[Path]:
    found = {p for pattern in COPIED for p in ROOT.glob(pattern) if p.is_file()}
    return sorted(p for p in found if p.suffix not in {".png", ".tgz", ".gz"})


def refs_in(text: str) -> list[tuple[int, str]]:
    return [
        (text.count("\n", 0, m.start()) + 1, m.group("ref")) for pattern in REF_PATTERNS for m in pattern.finditer(text)
    ]


def resolves(ref: str) -> bool:
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=ROOT, capture_output=True, timeout=30
    )
    return done.returncode == 0


def test_every_copied_ref_is_the_placeholder_or_exists() -> None:
    seen = [
        (path, line, ref)
        for path in copied_files()
        for line, ref in refs_in(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert len(seen) >= 20, seen  # the install lines, the Action, the component, the hook and the runbooks
    missing = [
        f"{path.relative_to(ROOT)}:{line}: {ref}"
        for path, line, ref in seen
        if not PLACEHOLDER.match(ref) and not resolves(ref)
    ]
    assert not missing, "refs no one can check out:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ('pipx install "git+<kai-gitops-git-url>@v0.1.0"', "v0.1.0"),
        ("  - uses: <owner>/kai-gitops@v1", "v1"),
        ("  - component: $CI_SERVER_FQDN/<group>/kai-gitops/kai-gitops-check@0.1.0", "0.1.0"),
        ("#       rev: v0.1.0", "v0.1.0"),
        ("runbook_url: <kai-gitops-git-url>/blob/v0.1.0/docs/monitoring.md#x", "v0.1.0"),
    ],
)
def test_the_old_pins_are_found_and_do_not_resolve(text: str, ref: str) -> None:
    assert refs_in(text) == [(1, ref)]
    assert not resolves(ref)


def test_the_placeholder_is_explained_where_installing_is() -> None:
    section = (ROOT / "docs/ci.md").read_text().split("## Installing kai-gitops", 1)[1].split("\n## ", 1)[0]
    assert "`<release-tag>`" in section and "development.md#releases" in section


def test_one_version_everywhere_a_release_names_it() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    chart = (ROOT / "deploy/helm/kai-gitops/Chart.yaml").read_text()
    assert f"version: {version}\n" in chart and f'appVersion: "{version}"' in chart
    assert f"ARG VERSION={version}\n" in (ROOT / "Dockerfile").read_text()
    assert f"({version})" in (ROOT / "CHANGELOG.md").read_text()
