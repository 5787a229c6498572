"""Shared helpers of tests/deploy/test_helm_chart.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from tests.support.helpers import ROOT

CHART = ROOT / "deploy" / "helm" / "kai-gitops"
