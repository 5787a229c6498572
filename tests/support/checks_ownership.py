"""Shared helpers of tests/checks/test_ownership.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from typing import Any

TIME, LATER = "2026-11-02T09:00:00Z", "2026-11-30T14:02:11Z"


def managed(manager: str, fields: dict[str, Any], *, time: str = TIME, operation: str = "Update") -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "scheduling.run.ai/v2",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
