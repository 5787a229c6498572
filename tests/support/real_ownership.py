"""Shared helpers of tests/real/test_ownership.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import subprocess

from tests.support.kai_cluster import CHILD, CLI_TIMEOUT_S, KaiCluster
from tests.support.tools import require_tool

KRM_APPLY = f"""\
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: {CHILD}
spec:
  resources:
    gpu:
      quota: 4
"""


def server_side_apply(
    cluster: KaiCluster, manager: str, manifest: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """`kubectl apply --server-side` of `manifest` as field manager `manager` (not checked: a conflict is an answer)."""
    path = cluster.tmp / f"{manager}.yaml"
    path.write_text(manifest)
    return subprocess.run(
        [
            str(require_tool("kubectl")),
            "--kubeconfig",
            str(cluster.kubeconfig),
            "apply",
            "--server-side",
            f"--field-manager={manager}",
            "-f",
            str(path),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )
