#!/usr/bin/env python3
"""Extract the OpenAPI schemas of KAI's CRDs at a KAI ref into reconciler/data/crds/.

    python tools/kai_crds.py --mirror PATH-TO-KAI-GIT-DIR v0.17.0                # a tag: the version is its name
    python tools/kai_crds.py --mirror PATH-TO-KAI-GIT-DIR v0.17 --version v0.17.1  # a branch head as a release
    python tools/kai_crds.py --mirror PATH-TO-KAI-GIT-DIR --all                  # every version in the index again

Every served version of every CRD under `deployments/kai-scheduler/crds/` at the ref is kept: its
`openAPIV3Schema` with the human `description` texts dropped (nothing reads them, and they are four fifths of
the bytes), as compact JSON. The files are content-addressed (`<kind>-<sha12>.json`) so a schema that did not
change between versions is stored once; `index.json` maps version -> kind -> apiVersion -> file, and records the
ref and commit each version was read from. The checker (reconciler/model/crd_schemas.py) reads only these files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "reconciler" / "data" / "crds"
CRD_DIR = "deployments/kai-scheduler/crds"
INDEX = "index.json"
RELEASE = re.compile(r"v\d+\.\d+\.\d+")  # what index.json sorts by (`_version_key`), as tools/kai_release.py --as
# Keys whose value is one schema, and keys whose value maps names (or positions) to schemas.
_ONE_SCHEMA = ("items", "additionalProperties", "not")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_DROPPED = ("description",)


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout


def crd_schemas_at(mirror: Path, ref: str) -> dict[str, dict[str, object]]:
    """kind -> "group/version" -> schema (descriptions dropped), for every served version at `ref`."""
    names = sorted(_git(mirror, "ls-tree", "--name-only", f"{ref}:{CRD_DIR}").split())
    return crd_schemas_in(_git(mirror, "show", f"{ref}:{CRD_DIR}/{name}") for name in names if name.endswith(".yaml"))


def crd_schemas_in(texts: Iterable[str]) -> dict[str, dict[str, object]]:
    """The same, from the texts of the CRD files (a copied tree's `deployments/kai-scheduler/crds/*.yaml`)."""
    found: dict[str, dict[str, object]] = {}
    for text in texts:
        crd = yaml.safe_load(text)
        if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd["spec"]
        for served in spec["versions"]:
            if served.get("served") is False:
                continue
            schema = served["schema"]["openAPIV3Schema"]
            found.setdefault(spec["names"]["kind"], {})[f"{spec['group']}/{served['name']}"] = strip(schema)
    return found


def strip(schema: object) -> object:
    """The schema without its description texts; a property *named* description is kept."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, object] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key in _ONE_SCHEMA and isinstance(value, dict):
            out[key] = strip(value)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [strip(sub) for sub in value]
        else:
            out[key] = value
    return out


def write_crd_schemas(mirror: Path, ref: str, version: str, out_dir: Path = OUT_DIR) -> dict[str, dict[str, str]]:
    """Write the CRD schemas of KAI at `ref` as `version` into `out_dir` (schema files and the index entry);
    return the entry (kind -> apiVersion -> file). Files no version names any more are removed."""
    commit = _git(mirror, "rev-parse", f"{ref}^{{commit}}").strip()
    return write_schemas(crd_schemas_at(mirror, ref), version, {"ref": ref, "commit": commit}, out_dir)


def write_schemas(
    found: dict[str, dict[str, object]], version: str, source: dict[str, str], out_dir: Path = OUT_DIR
) -> dict[str, dict[str, str]]:
    """Write schemas read elsewhere (`crd_schemas_at`, `crd_schemas_in`) as `version`, `source` naming where from.
    A `version` that is not a release tag is refused before anything is written (it was a schema file written,
    then a crash sorting the index, the file left behind)."""
    if not RELEASE.fullmatch(version):
        raise ValueError(f"version {version!r} is not a release tag such as v0.17.1 (a branch ref needs --version)")
    out_dir.mkdir(parents=True, exist_ok=True)
    entry: dict[str, dict[str, str]] = {}
    for kind, by_version in found.items():
        for api_version, schema in by_version.items():
            text = json.dumps(schema, separators=(",", ":"), sort_keys=True)
            name = f"{kind.lower()}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
            target = out_dir / name
            if not target.exists():
                target.write_text(text + "\n")
            entry.setdefault(kind, {})[api_version] = name
    index = _read_index(out_dir)
    index[version] = {"source": source, "kinds": entry}
    (out_dir / INDEX).write_text(
        json.dumps(dict(sorted(index.items(), key=lambda kv: _version_key(kv[0]))), indent=1, sort_keys=False) + "\n"
    )
    _remove_unnamed(out_dir, index)
    return entry


def _read_index(out_dir: Path) -> dict[str, dict[str, object]]:
    path = out_dir / INDEX
    return json.loads(path.read_text()) if path.exists() else {}


def _remove_unnamed(out_dir: Path, index: dict[str, dict[str, object]]) -> None:
    named = {
        file
        for entry in index.values()
        for kinds in [entry["kinds"]]
        if isinstance(kinds, dict)
        for files in kinds.values()
        for file in files.values()
    }
    for path in out_dir.glob("*-*.json"):
        if path.name not in named:
            path.unlink()


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.lstrip("v").split("."))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="a KAI-Scheduler git directory (bare is fine)")
    parser.add_argument("ref", nargs="?", help="tag or branch to read")
    parser.add_argument("--version", help="the release this ref stands for (default: the ref)")
    parser.add_argument("--all", action="store_true", help="read every version of index.json again at its ref")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    if args.all:
        for version, entry in _read_index(args.out).items():
            source = entry["source"]
            assert isinstance(source, dict)
            write_crd_schemas(args.mirror, str(source["ref"]), version, args.out)
    elif args.ref:
        version = args.version or args.ref
        if not RELEASE.fullmatch(version):
            parser.error(
                f"{'--version' if args.version else 'ref'} {version!r} is not a release tag such as v0.17.1: "
                "give a branch with --version vX.Y.Z"
            )
        write_crd_schemas(args.mirror, args.ref, version, args.out)
    else:
        parser.error("give a ref, or --all")
    size = sum(p.stat().st_size for p in args.out.glob("*.json"))
    print(
        f"{len(_read_index(args.out))} versions, {len(list(args.out.glob('*-*.json')))} schema files, "
        f"{size} bytes in {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
