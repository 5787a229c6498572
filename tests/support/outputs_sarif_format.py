"""Shared helpers of tests/outputs/test_sarif_format.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import json
from functools import cache

import jsonschema

from tests.support.helpers import FIXTURES


@cache
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads((FIXTURES / "formats" / "sarif-schema-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)
