"""Shared fixtures: the shipped pack, the example facts documents, and a stand-in OPA server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.checks.policy import PolicySet, load_policy_set
from tests.support.opa_standin import OpaStandin
from tests.support.policy_shared import USER_RULE


@pytest.fixture(scope="session")
def shipped() -> PolicySet:
    return load_policy_set()


@pytest.fixture()
def user_dir(tmp_path: Path) -> Path:
    root = tmp_path / "acme-policies"
    (root / "queues").mkdir(parents=True)
    (root / "queues" / "names.rego").write_text(USER_RULE)
    return root


@pytest.fixture()
def standin() -> Iterator[OpaStandin]:
    server = OpaStandin(token="s3cret").start()
    try:
        yield server
    finally:
        server.stop()
