"""The one place tests find the real tools (kube-apiserver, etcd, kubectl, helm, opa, actionlint, promtool).

``make tools`` (tools/build.py) builds them from tools/*/go.mod into a cache outside the clone and prints
their bin folder; this module computes the same folder (``tools/build.py --print`` logic, no build), or
takes ``$KAI_GITOPS_TOOLS_BIN`` when set. ``activate()`` puts that folder first on PATH, so tests and the
processes they start run the pinned binaries; tests/conftest.py calls it once per session.

``require_tool("kubectl")`` returns the binary's path, or skips the test with the reason (no Go, not built
yet, ...). Under ``CI=true`` a missing tool FAILS the test instead: CI must not go green by skipping the
real-cluster tier.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ENV_BIN = "KAI_GITOPS_TOOLS_BIN"
REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "tools" / "build.py"


class ToolMissing(RuntimeError):
    """A real tool is not available; the message says why and what to run."""


def _build_module():
    spec = importlib.util.spec_from_file_location("_kai_gitops_tools_build", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class body runs
    spec.loader.exec_module(module)
    return module


def is_ci() -> bool:
    return _build_module().is_ci()


@functools.cache
def _locate() -> tuple[Path | None, str | None]:
    """(bin folder, None) or (None, why not)."""
    explicit = os.environ.get(ENV_BIN)
    if explicit:
        folder = Path(explicit).expanduser()
        if folder.is_dir():
            return folder, None
        return None, f"${ENV_BIN}={explicit} is not a directory"
    build = _build_module()
    try:
        folder = build.bin_dir()
    except build.GoMissing as error:
        return None, f"real tools unavailable: {error} (install Go {build.go_needed()} or newer, then `make tools`)"
    except build.ToolsError as error:
        return None, f"real tools unavailable: {error}"
    if not folder.is_dir():
        return None, f"real tools not built for the current pins: run `make tools` (expected in {folder})"
    return folder, None


def bin_dir() -> Path | None:
    """The folder holding the current pins' binaries, or None when they are not available."""
    return _locate()[0]


def tool_path(name: str) -> Path:
    """The pinned binary ``name``; raises ToolMissing (with the reason) when it is not available."""
    folder, reason = _locate()
    if folder is None:
        raise ToolMissing(reason)
    path = folder / name
    if not os.access(path, os.X_OK):
        raise ToolMissing(f"{name} is not among the built tools in {folder} (see tools/*/tools.go)")
    return path


def require_tool(name: str) -> Path:
    """The binary's path for a test; skips the test when it is missing, and fails it under CI=true."""
    try:
        return tool_path(name)
    except ToolMissing as error:
        if is_ci():
            pytest.fail(f"{error} (CI=true: the real-cluster tier must run)", pytrace=False)
        pytest.skip(str(error))


def activate() -> Path | None:
    """Put the bin folder first on PATH for this process and its children (idempotent)."""
    folder = bin_dir()
    if folder is not None:
        entries = os.environ.get("PATH", "").split(os.pathsep)
        if str(folder) not in entries:
            os.environ["PATH"] = os.pathsep.join([str(folder), *entries])
    return folder
