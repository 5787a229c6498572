"""One set of findings every output format is rendered from and checked against.

It holds what the formats must get right: drift with a plan, the same stale queue reported by three rules,
a live-only finding without a file, a message with Markdown, HTML and workflow-command injection text, a
waived finding, a finding about the change itself, and a cluster that is clean.
"""

from __future__ import annotations

import pytest

from reconciler.report.report import Report
from tests.support.outputs_shared import sample_report


@pytest.fixture
def report() -> Report:
    return sample_report()
