"""Shared helpers of tests/deploy/test_ci_templates.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from reconciler.cli import main
from tests.support.helpers import ROOT

CI = ROOT / "repo-templates" / "ci"

GITLAB = CI / "gitlab-ci.yml"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def parse_call(args: list[str]) -> tuple[click.Command, dict[str, Any]]:
    """Resolve the subcommand and parse its options with click itself: unknown ones raise."""
    command: click.Command = main
    rest = list(args)
    while isinstance(command, click.Group):
        assert rest, f"no subcommand in kai-gitops {' '.join(args)}"
        name = rest.pop(0)
        assert name in command.commands, f"kai-gitops has no command {name!r}"
        command = command.commands[name]
    context = command.make_context(f"kai-gitops {args[0]}", rest)
    return command, context.params


PLACEHOLDER = "<kai-gitops-git-url>"  # the one spot a user fills in: the Git URL of kai-gitops itself

RELEASE_TAG = "<release-tag>"  # the release a user installs, explained once (docs/ci.md#installing-kai-gitops)


def release_ref() -> str:
    """The ref every copied line names: the placeholder, never a tag of its own (tests/project/test_release_refs.py)."""
    return RELEASE_TAG


def local_tag() -> str:
    """The tag the test clone carries in the placeholder's place: `v` + this checkout's version."""
    from importlib.metadata import version

    return f"v{version('kai-gitops')}"


@pytest.fixture(scope="module")
def local_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this repository at HEAD, tagged as a release is (the tag a user puts for `<release-tag>`)."""
    clone = tmp_path_factory.mktemp("kai-gitops-git") / "kai-gitops"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120)
    subprocess.run(["git", "-C", str(clone), "tag", "--force", local_tag()], check=True, timeout=30)
    return clone


def throwaway_venv(where: Path) -> Path:
    """A venv that borrows this interpreter's pip and click (not its kai-gitops): pip runs, nothing is downloaded
    but the build backend, and `kai-gitops --version` needs no other dependency."""
    import sysconfig
    import venv

    venv.create(where, with_pip=False)
    borrowed = where / "borrowed"
    borrowed.mkdir()
    for package in ("pip", "click"):
        (borrowed / package).symlink_to(Path(sysconfig.get_paths()["purelib"]) / package)
    python = str(where / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    (Path(site) / "borrowed.pth").write_text(f"{borrowed}\n")
    return where
