#!/usr/bin/env python3
"""Add a KAI release to the model: one command reads the upstream chart and Go sources and writes the data.

    python tools/kai_release.py --mirror /work/.mirror/kai-scheduler+KAI-Scheduler/repo --ref v0.17 --as v0.17.1
    python tools/kai_release.py --tree DIR --as v0.17.1 --out /tmp/model      # a checked-out tree (the tests)

It writes, under `--out` (default `reconciler/data/`):

- `chart-values/<version>.yaml`: `deployments/kai-scheduler/values.yaml` at the ref, byte for byte (the chart
  defaults, the values keys and the keys its comments document: model/values.py, model/chart_keys.py);
- `shard-defaults/<version>.json`: the SchedulingShard's default plugins and actions with their priorities
  (`defaultPluginPriorities` / `defaultActionPriorities` beside `setDefaultPlugins` / `setDefaultActions` in
  `pkg/apis/kai/v1/schedulingshard_types.go`) and the scheduler plugins built in but off by default (the
  `RegisterPluginBuilder` calls of `pkg/scheduler/plugins/factory.go`), read from the Go source as text.
  A chart whose shard has no plugin defaults (before v0.12) gets no file: its shard has no plugins field;
- `crds/`: the OpenAPI schemas of the CRDs under `deployments/kai-scheduler/crds/` at the ref, content-addressed,
  with the version's entry in `crds/index.json` (`tools/kai_crds.py`: the manifest checks KAI-V-020..022).

The Go source is read as text on purpose: the model must not depend on a Go toolchain, and the tables are
plain map literals. A table the parser cannot find is an error, not an empty set, so an upstream refactor
shows up here rather than as a model that accepts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from kai_crds import CRD_DIR, INDEX, crd_schemas_in, write_crd_schemas, write_schemas  # tools/, beside this file

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = "github.com/kai-scheduler/KAI-Scheduler"
GO_MODULE = "github.com/kai-scheduler/KAI-scheduler/"
VALUES = "deployments/kai-scheduler/values.yaml"
SHARD_TYPES = "pkg/apis/kai/v1/schedulingshard_types.go"
PLUGIN_FACTORY = "pkg/scheduler/plugins/factory.go"

Reader = Callable[[str], "str | None"]


class SourceError(Exception):
    """The upstream source at this ref is not what the parser expects."""


def git_reader(mirror: Path, ref: str) -> Reader:
    def read(path: str) -> str | None:
        done = subprocess.run(["git", "-C", str(mirror), "show", f"{ref}:{path}"], capture_output=True, check=False)
        return done.stdout.decode() if done.returncode == 0 else None

    return read


def tree_reader(root: Path) -> Reader:
    def read(path: str) -> str | None:
        file = root / path
        return file.read_text() if file.is_file() else None

    return read


def commit_of(mirror: Path, ref: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(mirror), "rev-parse", f"{ref}^{{commit}}"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SourceError(f"{mirror}: no such ref {ref!r} ({done.stderr.strip()})")
    return done.stdout.strip()


# -- the Go tables ------------------------------------------------------------------------------------------


def priority_map(go: str, var: str) -> dict[str, int]:
    """`var <var> = map[string]int{ "name": 100, ... }` as a dict, in source order."""
    block = re.search(rf"^var {re.escape(var)} = map\[string\]int\{{(.*?)^\}}", go, re.S | re.M)
    if block is None:
        raise SourceError(f"{SHARD_TYPES}: no `var {var} = map[string]int{{...}}`")
    entries = re.findall(r'^\s*"([^"]+)":\s*(-?\d+),', block[1], re.M)
    if not entries:
        raise SourceError(f"{SHARD_TYPES}: {var} has no entries")
    return {name: int(priority) for name, priority in entries}


def registered_plugins(factory: str, read: Reader) -> list[str]:
    """Every name `framework.RegisterPluginBuilder` is called with, string literals and `<pkg>.Name` constants
    (resolved in the plugin package's own file)."""
    imports: dict[str, str] = {}
    for alias, path in re.findall(r'^\s*(\w+\s+)?"' + re.escape(GO_MODULE) + r'([^"]+)"', factory, re.M):
        imports[alias.strip() or path.rsplit("/", 1)[-1]] = path
    names: list[str] = []
    for literal, package in re.findall(r'RegisterPluginBuilder\(\s*(?:"([^"]+)"|(\w+)\.Name)\s*,', factory):
        names.append(literal or _package_name_constant(package, imports, read))
    if not names:
        raise SourceError(f"{PLUGIN_FACTORY}: no RegisterPluginBuilder calls")
    return names


def _package_name_constant(package: str, imports: dict[str, str], read: Reader) -> str:
    path = imports.get(package)
    if path is None:
        raise SourceError(f"{PLUGIN_FACTORY}: {package}.Name names a package it does not import")
    file = f"{path}/{path.rsplit('/', 1)[-1]}.go"
    text = read(file)
    found = re.search(r'^const Name = "([^"]+)"', text or "", re.M)
    if found is None:
        raise SourceError(f'{file}: no `const Name = "..."` for {package}.Name')
    return found[1]


def shard_defaults(read: Reader) -> dict[str, object] | None:
    """The default shard plugin and action tables, or None for a version whose shard has no defaults."""
    go = read(SHARD_TYPES)
    if go is None or "setDefaultPlugins" not in go:
        return None
    plugins = priority_map(go, "defaultPluginPriorities")
    actions = priority_map(go, "defaultActionPriorities")
    factory = read(PLUGIN_FACTORY)
    if factory is None:
        raise SourceError(f"{PLUGIN_FACTORY}: missing")
    optional = sorted(set(registered_plugins(factory, read)) - set(plugins))
    return {"plugins": plugins, "actions": actions, "optionalPlugins": optional}


# -- writing ----------------------------------------------------------------------------------------------


def write_release(read: Reader, version: str, out: Path, source: dict[str, str]) -> list[Path]:
    """Writes the model files of `version` under `out`; returns them."""
    values = read(VALUES)
    if values is None:
        raise SourceError(f"{VALUES}: missing")
    written = [_write(out / "chart-values" / f"{version}.yaml", values)]
    defaults = shard_defaults(read)
    if defaults is not None:
        document = {"version": version, "source": source, **defaults}
        written.append(_write(out / "shard-defaults" / f"{version}.json", json.dumps(document, indent=2) + "\n"))
    return written


def write_crds(args: argparse.Namespace, source: dict[str, str]) -> list[Path]:
    """The CRD schemas of the version (tools/kai_crds.py), for the manifest checks (KAI-V-020..022)."""
    out = args.out / "crds"
    if args.mirror is not None:
        write_crd_schemas(args.mirror, args.ref, args.version, out)
    else:
        texts = [path.read_text() for path in sorted((args.tree / CRD_DIR).glob("*.yaml"))]
        if not texts:
            return []
        write_schemas(
            crd_schemas_in(texts), args.version, {k: source[k] for k in ("ref", "commit") if k in source}, out
        )
    return [out / INDEX]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--mirror", type=Path, help="a git directory of KAI-Scheduler (read with git show)")
    where.add_argument("--tree", type=Path, help="a directory holding the upstream files at their paths")
    parser.add_argument("--ref", help="the tag or branch to read (with --mirror; with --tree, recorded only)")
    parser.add_argument("--commit", help="with --tree: the upstream commit the tree is a copy of (recorded)")
    parser.add_argument("--as", dest="version", required=True, help="the release name to model, e.g. v0.17.1")
    parser.add_argument("--out", type=Path, default=REPO / "reconciler" / "data")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"v\d+\.\d+\.\d+", args.version):
        parser.error(f"--as {args.version!r}: give a release tag such as v0.17.1")
    try:
        if args.mirror is not None:
            if not args.ref:
                parser.error("--mirror needs --ref")
            read = git_reader(args.mirror, args.ref)
            source = {"repository": UPSTREAM, "ref": args.ref, "commit": commit_of(args.mirror, args.ref)}
        else:
            read = tree_reader(args.tree)
            source = {"repository": UPSTREAM, "ref": args.ref or args.version}
            if args.commit:
                source["commit"] = args.commit
        written = write_release(read, args.version, args.out, source) + write_crds(args, source)
    except SourceError as error:
        print(f"kai_release: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
