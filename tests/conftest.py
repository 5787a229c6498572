"""Suite-wide settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _text_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI picks JSON log lines when stderr is not a terminal, as under the test runner; the suite's
    error-line assertions read the text form. Tests of the JSON form pass --log-format json."""
    monkeypatch.setenv("KAI_GITOPS_LOG_FORMAT", "text")
