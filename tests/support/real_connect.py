"""Shared helpers of tests/real/test_connect.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def kai_gitops(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "kai-gitops"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "reconciler"]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "KAI_GITOPS_"))}
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env={**base, "HOME": str(cwd), **env}
    )
