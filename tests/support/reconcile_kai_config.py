"""Shared helpers of tests/reconcile/test_reconcile_kai_config.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import copy
from typing import Any

from ruamel.yaml import YAML

from tests.support.helpers import FIXTURES
from tests.support.reconcile_support import Demo

CONFIG_PATH = "/apis/kai.scheduler/v1/configs/kai-config"

GOLDEN = YAML(typ="safe", pure=True).load(
    YAML(typ="safe", pure=True).load((FIXTURES / "nvcf/golden/kai-config-manifest-configmap.yaml").read_text())["data"][
        "kai-config.yaml"
    ]
)["spec"]


def drifted_spec() -> dict[str, Any]:
    spec = copy.deepcopy(GOLDEN)
    spec["admission"]["gpuSharing"] = True  # a hand edit
    spec["scheduler"]["service"]["resources"]["limits"] = {"cpu": "4000m"}  # memory dropped, cpu raised
    spec["global"]["nodePoolLabelKey"] = "team.example/pool"  # Git leaves it to the operator
    return spec


def stored_spec(demo: Demo) -> dict[str, Any]:
    found = demo.server.get_object("kai.scheduler/v1", "Config", "kai-config")
    assert found is not None
    return dict(found["spec"])
