"""Fixtures shared by the tests below tests/deploy/."""

from __future__ import annotations

from tests.support.deploy_ci_templates import local_release  # noqa: F401 - a fixture for the tests below this folder
