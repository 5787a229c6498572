"""Suite-wide settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support import tools

# CI draws the same examples every run (a red CI must mean the change, not the dice); a developer's run
# explores new ones, and a failure found there is kept in .hypothesis/ and replayed.
settings.register_profile("ci", derandomize=True, database=None)
if tools.is_ci():
    settings.load_profile("ci")

# The pinned real tools (tools/, `make tools`) first on PATH for every test and the processes it starts.
tools.activate()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real: runs against the real etcd + kube-apiserver (tests/real/, make tools)")


@pytest.fixture(autouse=True, scope="session")
def _text_logs() -> Iterator[None]:
    """The CLI picks JSON log lines inside a Kubernetes pod, where a CI runner may run this suite; the
    suite's error-line assertions read the text form. Tests of the JSON form pass --log-format json, and
    tests of `auto` set the variable themselves.

    Session-scoped, so module-scoped fixtures that run the CLI see it too."""
    previous = os.environ.get("KAI_GITOPS_LOG_FORMAT")
    os.environ["KAI_GITOPS_LOG_FORMAT"] = "text"
    yield
    if previous is None:
        os.environ.pop("KAI_GITOPS_LOG_FORMAT", None)
    else:
        os.environ["KAI_GITOPS_LOG_FORMAT"] = previous


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled demo's GitOps repository (repo-templates/demo/build.py), built once per test module."""
    from tests.support.helpers import load_demo_builder

    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target
