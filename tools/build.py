#!/usr/bin/env python3
"""Build the real tools the tests run (kube-apiserver, etcd, kubectl, helm, opa, actionlint, promtool) from
the Go modules next to this file, into a cache, and print the one folder holding the current pins' binaries.

    python3 tools/build.py            # build what is missing, print the bin folder as the last line
    python3 tools/build.py --print    # print the bin folder the current pins map to; build nothing

Each ``tools/<tool>/go.mod`` is that tool's only version pin: the version shown and used in the cache key
is read from it (the module that provides the command ``tools.go`` or ``main.go`` imports). A build is
keyed by tool, version, Go version/platform and a hash of the module's go.mod, go.sum and *.go files, and
is reused whenever that key is already built.

The cache lives OUTSIDE the clone, in ``$KAI_GITOPS_TOOLS_DIR``, else ``$XDG_CACHE_HOME/kai-gitops/tools``,
else ``~/.cache/kai-gitops/tools``: a fresh clone on the same machine (as CI's runner makes for every run)
reuses the binaries an earlier clone built instead of spending many minutes relinking kube-apiserver.

Layout: ``builds/<key>/<binary>`` (one directory per module build, renamed into place only once complete,
so an interrupted build never leaves a broken binary behind) and ``sets/<hash of all keys>/bin/`` with a
symlink per binary: the folder for exactly this checkout's pins, printed last.

Without a Go toolchain on PATH it prints one line saying the real-cluster tier is skipped and exits 0; with
``CI=true`` that is an error (exit 1). Progress goes to stderr; stdout is only the bin folder.
Standard library only: it runs before (and without) the project's virtualenv.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Bumped when the way a binary is built changes, so old builds are not reused for the new recipe.
RECIPE = "1"


def _major_minor(version: str) -> tuple[str, str]:
    match = re.match(r"v(\d+)\.(\d+)\.", version)
    if not match:
        raise ToolsError(f"cannot read major.minor from {version}")
    return match.group(1), match.group(2)


def release_stamps(module: str, version: str, requires: dict[str, str]) -> dict[str, str]:
    """The -X variables a release build sets and a plain `go build` leaves at placeholders. Every value is
    derived from go.mod (the tool's version or a dependency's), never written here."""
    if module == "k8s.io/kubernetes":  # hack/lib/version.sh; kubectl refuses `version` without it
        major, minor = _major_minor(version)
        return {
            f"{package}.{name}": value
            for package in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version")
            for name, value in (
                ("gitVersion", version),
                ("gitMajor", major),
                ("gitMinor", minor),
                ("gitTreeState", "clean"),
            )
        }
    if module == "helm.sh/helm/v3":  # helm's Makefile; without it `helm template` assumes Kubernetes v1.20
        major, minor = _major_minor(requires["k8s.io/client-go"])  # client-go v0.N.x is Kubernetes 1.N
        kube_major = str(int(major) + 1)
        return {
            "helm.sh/helm/v3/internal/version.version": version,
            "helm.sh/helm/v3/internal/version.gitTreeState": "clean",
            **{
                f"helm.sh/helm/v3/pkg/{package}.{name}": value
                for package in ("chartutil", "lint/rules")
                for name, value in (("k8sVersionMajor", kube_major), ("k8sVersionMinor", minor))
            },
        }
    return {}


class ToolsError(Exception):
    pass


def is_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def cache_root() -> Path:
    explicit = os.environ.get("KAI_GITOPS_TOOLS_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kai-gitops" / "tools"


@dataclass
class GoMod:
    module: str
    requires: dict[str, str] = field(default_factory=dict)
    replaces: dict[str, str] = field(default_factory=dict)  # path -> version, for version replacements only


def parse_gomod(text: str) -> GoMod:
    gomod = GoMod(module="")
    block = None
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = None
                continue
            _directive(gomod, block, line)
            continue
        verb, _, rest = line.partition(" ")
        rest = rest.strip()
        if rest == "(":
            block = verb
        else:
            _directive(gomod, verb, rest)
    if not gomod.module:
        raise ToolsError("go.mod has no module line")
    return gomod


def _directive(gomod: GoMod, verb: str, rest: str) -> None:
    words = rest.split()
    if verb == "module" and words:
        gomod.module = words[0].strip('"')
    elif verb == "require" and len(words) >= 2:
        gomod.requires[words[0]] = words[1]
    elif verb == "replace" and "=>" in words:
        arrow = words.index("=>")
        target = words[arrow + 1 :]
        if len(target) == 2:  # `old => new vX`; a local directory replacement has no version
            gomod.replaces[words[0]] = target[1]


_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)\)", re.S | re.M)
_IMPORT_LINE = re.compile(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', re.M)


def go_imports(source: str) -> list[str]:
    found = _IMPORT_LINE.findall(source)
    for block in _IMPORT_BLOCK.findall(source):
        found += re.findall(r'"([^"]+)"', block)
    return found


@dataclass
class Tool:
    name: str  # the folder under tools/
    directory: Path
    packages: list[str]  # what `go build` builds; "." for a main package in the folder itself
    module: str  # the module (from go.mod) that provides the command
    version: str  # its version, from go.mod
    stamps: dict[str, str] = field(default_factory=dict)  # -X variables of a release build
    key: str = ""
    go: str = ""

    @property
    def build_flags(self) -> list[str]:
        # -buildvcs=false: the main module is our wrapper, its Git state means nothing (and stamping it fails
        # in checkouts owned by another user, as in some CI containers).
        flags = ["-trimpath", "-buildvcs=false"]
        if self.ldflags:
            flags.append(f"-ldflags={self.ldflags}")
        return flags

    @property
    def ldflags(self) -> str:
        return " ".join(f"-X {name}={value}" for name, value in self.stamps.items())


def discover(tools_dir: Path = HERE) -> list[Tool]:
    tools = []
    for gomod_path in sorted(tools_dir.glob("*/go.mod")):
        directory = gomod_path.parent
        gomod = parse_gomod(gomod_path.read_text())
        packages, imported = [], []
        for source_path in sorted(directory.glob("*.go")):
            source = source_path.read_text()
            if re.search(r"^//go:build tools\s*$", source, re.M):
                packages += go_imports(source)
                imported += go_imports(source)
            elif re.search(r"^package main\b", source, re.M):
                if "." not in packages:
                    packages.append(".")
                imported += go_imports(source)
        if not packages:
            raise ToolsError(f"{directory}: neither a tools.go (//go:build tools) nor a main package")
        module = _providing_module(gomod, imported, directory)
        requires = gomod.requires | gomod.replaces
        version = requires[module]
        tools.append(
            Tool(directory.name, directory, packages, module, version, release_stamps(module, version, requires))
        )
    if not tools:
        raise ToolsError(f"no tool modules under {tools_dir}")
    return tools


def _providing_module(gomod: GoMod, imported: list[str], directory: Path) -> str:
    best = ""
    for path in imported:
        for module in gomod.requires:
            if (path == module or path.startswith(module + "/")) and len(module) > len(best):
                best = module
    if not best:
        raise ToolsError(f"{directory}: no required module provides {imported}")
    return best


def go_env(directory: Path) -> dict[str, str]:
    names = ["GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED"]
    try:
        out = subprocess.run(["go", "env", *names], cwd=directory, capture_output=True, text=True, check=True)
    except FileNotFoundError as error:
        raise GoMissing("no Go toolchain on PATH") from error
    except subprocess.CalledProcessError as error:
        # Typically a Go older than a module's `go` line with GOTOOLCHAIN=local, or no way to fetch a newer
        # toolchain: a Go that cannot build these pins is as good as none, so the tier is skipped (not failed).
        raise GoMissing(
            f"the Go toolchain on PATH cannot build {directory.name}: {' '.join(error.stderr.split())[:300]}"
        ) from error
    return dict(zip(names, out.stdout.split(), strict=True))


class GoMissing(ToolsError):
    """No usable Go: the real-cluster tier is skipped outside CI."""


def go_needed(tools_dir: Path = HERE) -> str:
    """The newest `go` line of the tool modules: the Go release every pin builds with."""
    versions = [
        line.split()[1]
        for mod in sorted(tools_dir.glob("*/go.mod"))
        for line in mod.read_text().splitlines()
        if line.startswith("go ")
    ]
    return max(versions, key=lambda v: tuple(int(part) for part in v.split(".")), default="1.26")


def assign_keys(tools: list[Tool]) -> None:
    env_cache: dict[str, dict[str, str]] = {}
    for tool in tools:
        env = go_env(tool.directory)
        env_cache[tool.name] = env
        digest = hashlib.sha256(f"recipe {RECIPE}\nflags {tool.build_flags}\ncgo {env['CGO_ENABLED']}\n".encode())
        for path in sorted([tool.directory / "go.mod", tool.directory / "go.sum", *tool.directory.glob("*.go")]):
            if path.exists():
                digest.update(f"{path.name}\n".encode() + path.read_bytes() + b"\n")
        tool.go = env["GOVERSION"]
        tool.key = "-".join(
            [tool.name, tool.version, env["GOVERSION"], f"{env['GOOS']}_{env['GOARCH']}", digest.hexdigest()[:12]]
        )


def set_dir(root: Path, tools: list[Tool]) -> Path:
    digest = hashlib.sha256("\n".join(sorted(tool.key for tool in tools)).encode()).hexdigest()[:16]
    return root / "sets" / digest / "bin"


def bin_dir() -> Path:
    """The bin folder for the current pins (it may not be built yet). Raises GoMissing without Go."""
    tools = discover()
    assign_keys(tools)
    return set_dir(cache_root(), tools)


def log(message: str) -> None:
    print(f"tools: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def locked(root: Path):
    """One builder at a time per cache (two clones' `make test` must not link kube-apiserver twice at once)."""
    import fcntl

    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another build holding {root / '.lock'}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def build(tool: Tool, builds: Path) -> float:
    target = builds / tool.key
    staging = Path(tempfile.mkdtemp(prefix=f".{tool.key}.", dir=builds))
    staging.chmod(0o755)
    command = ["go", "build", *tool.build_flags, "-o", str(staging) + os.sep, *tool.packages]
    log(f"building {tool.name} {tool.version} with {tool.go}: {' '.join(tool.packages)}")
    started = time.monotonic()
    try:
        result = subprocess.run(
            command, cwd=tool.directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if result.returncode != 0:
            raise ToolsError(f"building {tool.name} failed ({' '.join(command)}):\n{result.stdout.strip()}")
        if not any(staging.iterdir()):
            raise ToolsError(f"building {tool.name} produced no binary")
        (staging / ".built").write_text(f"{tool.module} {tool.version} {tool.go}\n")
        os.rename(staging, target)  # atomic: the key directory exists only complete
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    elapsed = time.monotonic() - started
    log(f"built {tool.name} in {elapsed:.0f}s")
    return elapsed


def link_set(tools: list[Tool], root: Path) -> Path:
    final = set_dir(root, tools)
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".bin.", dir=final.parent))
    staging.chmod(0o755)
    try:
        for tool in tools:
            build_dir = root / "builds" / tool.key
            for binary in sorted(build_dir.iterdir()):
                if binary.name.startswith("."):
                    continue
                link = staging / binary.name
                if link.exists():
                    raise ToolsError(f"two tools provide {binary.name}")
                link.symlink_to(os.path.relpath(binary, final))
        os.rename(staging, final)
    except OSError:
        if not final.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the bin folder for the current pins; build nothing")
    args = parser.parse_args(argv)
    try:
        tools = discover()
        assign_keys(tools)
        root = cache_root()
        if args.print:
            print(set_dir(root, tools))
            return 0
        builds = root / "builds"
        missing = [tool for tool in tools if not (builds / tool.key).is_dir()]
        if missing:
            with locked(root):
                builds.mkdir(parents=True, exist_ok=True)
                started = time.monotonic()
                for tool in missing:
                    if not (builds / tool.key).is_dir():  # another builder may have finished it meanwhile
                        build(tool, builds)
                took = time.monotonic() - started
                log(f"{len(missing)} of {len(tools)} module(s) built in {took:.0f}s; cache {root}")
        final = link_set(tools, root)
    except GoMissing as error:
        if is_ci():
            print(
                f"tools: ERROR: {error}; CI=true requires the real-cluster tier (install Go, see go.mod)",
                file=sys.stderr,
            )
            return 1
        print(
            f"tools: real-cluster tier skipped: {error} (install Go {go_needed()} or newer and rerun `make tools`)",
            file=sys.stderr,
        )
        return 0
    except ToolsError as error:
        print(f"tools: ERROR: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # an unwritable cache folder, a full disk: one line, not a traceback
        print(
            f"tools: ERROR: {error.strerror or error}: {error.filename or cache_root()} "
            "(set KAI_GITOPS_TOOLS_DIR to a writable folder)",
            file=sys.stderr,
        )
        return 1
    print(final)
    return 0


if __name__ == "__main__":
    sys.exit(main())
