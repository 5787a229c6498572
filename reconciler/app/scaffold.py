"""`kai-gitops init`: a new GitOps repository's files, from the templates in `reconciler/data/init/`.

What it writes is what the docs tell a user to start from: `kai-gitops.yaml` with one entry per cluster,
its JSON Schema beside it (editor completion), per cluster the values files in the canonical form (a
standalone cluster's KAI values are `data/canonical-kai-values.yaml`, written out), a waivers file with
commented examples, and the CI template (the same bytes as `repo-templates/ci/`). Nothing is overwritten:
every target is checked before the first byte is written, and each file is created exclusively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Literal

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue, expect_object
from reconciler.model.config import DEFAULT_STACK_KAI_VERSION
from reconciler.sources.repoconfig import CONFIG_FILE, parse_repo_config, schema

Mode = Literal["addon", "standalone"]
CiHost = Literal["github", "gitlab"]
MODES: tuple[Mode, ...] = ("addon", "standalone")
CI_TARGETS: dict[CiHost, tuple[str, str]] = {   # host: (template in data/init/ci, where the host reads it)
    "github": ("github-actions.yml", ".github/workflows/kai-gitops.yml"),
    "gitlab": ("gitlab-ci.yml", ".gitlab-ci.yml"),
}
SCHEMA_FILE = "kai-gitops.schema.json"
WAIVERS_FILE = "kai-gitops-waivers.yaml"


@dataclass(frozen=True)
class ClusterSeed:
    name: str
    mode: Mode


@dataclass(frozen=True)
class ScaffoldSettings:
    directory: Path
    clusters: tuple[ClusterSeed, ...]
    chart_version: str = DEFAULT_STACK_KAI_VERSION
    ci: CiHost | None = "github"


def scaffold_files(settings: ScaffoldSettings) -> dict[str, str]:
    """Repository path -> text of every file `init` writes, validated as `check` would read it."""
    check_seeds(settings)
    files: dict[str, str] = {CONFIG_FILE: repo_config_text(settings),
                             SCHEMA_FILE: _data("kai-gitops.schema.json"),
                             WAIVERS_FILE: _data("init/kai-gitops-waivers.yaml")}
    for seed in settings.clusters:
        files.update(cluster_files(seed, settings.chart_version))
    if settings.ci is not None:
        template, target = CI_TARGETS[settings.ci]
        files[target] = _data(f"init/ci/{template}")
    parse_repo_config(files[CONFIG_FILE].encode())   # the schema and the config model agree with what we wrote
    return files


def write_scaffold(settings: ScaffoldSettings) -> list[str]:
    """Write the files under `settings.directory`; refuse, writing nothing, if any of them exists."""
    files = scaffold_files(settings)
    root = settings.directory
    if root.exists() and not root.is_dir():
        raise UserError(f"{root} is not a directory", hint="give the directory to create the repository in")
    existing = [path for path in files if _occupied(root, path)]
    if existing:
        raise UserError(f"refusing to overwrite existing files in {root}: {', '.join(existing)}",
                        hint="move them away, or run init in another directory")
    for path, text in files.items():
        _create(root / path, text)
    return list(files)


def _occupied(root: Path, path: str) -> bool:
    """Something is at `path` already, or one of its folders is a file: either way init cannot write it."""
    target = root / path
    folders = [root / parent for parent in Path(path).parents if str(parent) != "."]
    return target.exists() or target.is_symlink() or any(f.exists() and not f.is_dir() for f in folders)


def _create(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # "x": a file that appeared since the check above is still not overwritten.
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}", hint="choose a directory you can write to") \
            from None


def check_seeds(settings: ScaffoldSettings) -> None:
    """The names and the chart version as the JSON Schema would judge them, said in terms of what was asked."""
    if not settings.clusters:
        raise UserError("no cluster to set up", hint="name at least one cluster and its install mode")
    seen: set[str] = set()
    for seed in settings.clusters:
        if not re.fullmatch(_schema_pattern("cluster", "properties", "name"), seed.name):
            raise UserError(f"cluster name {seed.name!r} is not allowed",
                            hint="lowercase letters, digits and '-', starting and ending with a letter or digit")
        if seed.name in seen:
            raise UserError(f"cluster {seed.name!r} is named twice", hint="give each cluster once")
        seen.add(seed.name)
    if not re.fullmatch(_schema_pattern("version"), settings.chart_version):
        raise UserError(f"KAI chart version {settings.chart_version!r} is not a version",
                        hint="give a chart tag such as v0.16.7")


def _schema_pattern(*keys: str) -> str:
    """The `pattern` of a definition in the JSON Schema of kai-gitops.yaml: one rule, not a copy of it."""
    value: JSONValue = expect_object(schema(), SCHEMA_FILE)["$defs"]
    for key in (*keys, "pattern"):
        value = expect_object(value, SCHEMA_FILE)[key]
    if not isinstance(value, str):
        raise TypeError(f"{SCHEMA_FILE}: {'.'.join(keys)} has no pattern")
    return value


def repo_config_text(settings: ScaffoldSettings) -> str:
    lines = [f"# yaml-language-server: $schema=./{SCHEMA_FILE}",
             "# kai-gitops repository configuration, one entry per cluster (docs/configuration.md).",
             "apiVersion: kai-gitops/v1", "clusters:"]
    for seed in settings.clusters:
        lines += cluster_entry(seed, settings.chart_version)
    lines.append(f"waiversFile: {WAIVERS_FILE}")
    return "\n".join(lines) + "\n"


def cluster_entry(seed: ClusterSeed, version: str) -> list[str]:
    entry = [f"  - name: {seed.name}"]
    if seed.mode == "addon":
        entry += ["    mode: addon                      # the nvcf-compute-plane stack installs KAI",
                  f"{'    kaiChartVersion: ' + version:<37}# the KAI version the stack pins"]
        if version != DEFAULT_STACK_KAI_VERSION:   # the bundled stack's own pin needs no repeating
            entry.append(f"    stackKaiVersion: {version}")
        entry.append(f"    environmentFile: {environment_path(seed)}")
    else:
        entry += ["    mode: standalone                 # KAI installed with helm install and its own values",
                  f"    kaiChartVersion: {version}",
                  f"    kaiValuesFile: {kai_values_path(seed)}",
                  f"    nvcaValuesFile: {nvca_values_path(seed)}"]
    return entry + _data("init/shared-cluster.yaml").splitlines()   # a choice to make, none acted upon


def environment_path(seed: ClusterSeed) -> str:
    return f"environments/{seed.name}.yaml"


def kai_values_path(seed: ClusterSeed) -> str:
    return f"clusters/{seed.name}/kai-values.yaml"


def nvca_values_path(seed: ClusterSeed) -> str:
    return f"clusters/{seed.name}/nvca-operator-values.yaml"


def cluster_files(seed: ClusterSeed, version: str) -> dict[str, str]:
    if seed.mode == "addon":
        path = environment_path(seed)
        return {path: _template("environment.yaml", cluster=seed.name, path=path, version=version)}
    path = kai_values_path(seed)
    header = _template("kai-values.yaml", cluster=seed.name, path=path, version=version)
    return {path: header + "\n" + canonical_values_body(),
            nvca_values_path(seed): _template("nvca-operator-values.yaml", cluster=seed.name, path=path,
                                              version=version)}


def canonical_values_body() -> str:
    """The canonical KAI values without the file's own licence header: the settings, in the guide's order."""
    lines = _data("canonical-kai-values.yaml").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    return "".join(lines[start:]).rstrip("\n") + "\n"


def _template(name: str, **values: str) -> str:
    return Template(_data(f"init/{name}")).substitute(values)


def _data(name: str) -> str:
    return resources.files("reconciler").joinpath(f"data/{name}").read_text(encoding="utf-8")
