"""Shared helpers of tests/real/test_helm_install.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.envtest import EnvTest
from tests.support.tools import require_tool

RELEASE = NAMESPACE = "kai-gitops"

SA_USER = f"system:serviceaccount:{NAMESPACE}:{RELEASE}"

Obj = dict[str, Any]


def helm(cluster: EnvTest, tmp: Path, *args: str) -> str:
    """The real helm as the admin, its caches and config under tmp (nothing written to the user's home)."""
    assert cluster.kubeconfig is not None
    env = {
        **os.environ,
        **{
            name: str(tmp / "helm" / name.lower()) for name in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")
        },
    }
    done = subprocess.run(
        [str(require_tool("helm")), "--kubeconfig", str(cluster.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, f"helm {' '.join(args)}: {done.stderr}"
    return done.stdout


def installed_objects(cluster: EnvTest, tmp: Path) -> list[Obj]:
    manifest = helm(cluster, tmp, "get", "manifest", RELEASE, "--namespace", NAMESPACE)
    return [o for o in yaml.safe_load_all(manifest) if o]
