"""Shared helpers of tests/deploy/test_deploy_cronjob_run.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.support.deploy_manifests import by_kind, main_container

Obj = dict[str, Any]


def container_env(objects: list[Obj], secret: dict[str, str], mounts: dict[str, Path]) -> dict[str, str]:
    container = main_container(objects)
    (settings,) = [o for o in by_kind(objects, "ConfigMap") if o["metadata"]["name"] == "kai-gitops-settings"]
    env: dict[str, str] = {}
    for item in container["env"]:
        source = item.get("valueFrom", {})
        if "value" in item:
            value = item["value"]
            env[item["name"]] = str(next((p for m, p in mounts.items() if value == m), value))
        elif "configMapKeyRef" in source:
            env[item["name"]] = settings["data"][source["configMapKeyRef"]["key"]]
        elif source["secretKeyRef"]["key"] in secret:
            env[item["name"]] = secret[source["secretKeyRef"]["key"]]
    return env


def expand(args: list[str], env: dict[str, str], mounts: dict[str, Path] | None = None) -> list[str]:
    """The args as the kubelet passes them ($(VAR) from the env), a mount path in them mapped to its stand-in dir."""
    expanded = [re.sub(r"\$\(([A-Z0-9_]+)\)", lambda m: env[m.group(1)], a) for a in args]
    for mount, path in (mounts or {}).items():
        expanded = [re.sub(rf"(?<![\w/.-]){re.escape(mount)}(?=/|$)", str(path), a) for a in expanded]
    return expanded
