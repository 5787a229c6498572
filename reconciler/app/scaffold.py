"""`kai-gitops init`: a new GitOps repository's files, from the templates in `reconciler/data/init/`.

What it writes is what the docs tell a user to start from: `kai-gitops.yaml` with one entry per cluster,
its JSON Schema beside it (editor completion), per cluster the values files in the canonical form (a
standalone cluster's KAI values are `data/canonical-kai-values.yaml`, written out), a waivers file with
commented examples, and the CI template (the same bytes as `repo-templates/ci/`). Nothing is overwritten:
every target is checked before the first byte is written, and each file is created exclusively. Nothing is
written outside the directory: below it, every folder and file is opened relative to its parent's handle
without following a symbolic link. And it is all or nothing: a write that fails removes what this run wrote.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Literal, NoReturn, TypeVar

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue, expect_object
from reconciler.model.config import DEFAULT_STACK_KAI_VERSION
from reconciler.sources.repoconfig import CONFIG_FILE, parse_repo_config, schema

Mode = Literal["addon", "standalone"]
CiHost = Literal["github", "gitlab"]
MODES: tuple[Mode, ...] = ("addon", "standalone")
CI_TARGETS: dict[CiHost, tuple[str, str]] = {  # host: (template in data/init/ci, where the host reads it)
    "github": ("github-actions.yml", ".github/workflows/kai-gitops.yml"),
    "gitlab": ("gitlab-ci.yml", ".gitlab-ci.yml"),
}
_T = TypeVar("_T")
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
    files: dict[str, str] = {
        CONFIG_FILE: repo_config_text(settings),
        SCHEMA_FILE: _data("kai-gitops.schema.json"),
        WAIVERS_FILE: _data("init/kai-gitops-waivers.yaml"),
    }
    for seed in settings.clusters:
        files.update(cluster_files(seed, settings.chart_version))
    if settings.ci is not None:
        template, target = CI_TARGETS[settings.ci]
        files[target] = _data(f"init/ci/{template}")
    parse_repo_config(files[CONFIG_FILE].encode())  # the schema and the config model agree with what we wrote
    return files


def write_scaffold(settings: ScaffoldSettings) -> list[str]:
    """Write the files under `settings.directory`, all or nothing: refuse, writing nothing, if any of them
    exists or a folder on the way is a symbolic link; remove what was written if a write fails half-way."""
    files = scaffold_files(settings)
    root = settings.directory
    if root.exists() and not root.is_dir():
        raise UserError(f"{root} is not a directory", hint="give the directory to create the repository in")
    with _Creation(root) as creation:
        existing = [path for path in files if creation.occupied(path)]
        if existing:
            raise UserError(
                f"refusing to overwrite existing files in {root}: {', '.join(existing)}",
                hint="move them away, or run init in another directory",
            )
        for path, text in files.items():
            creation.create(path, text.encode())
    return list(files)


_NO_FOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class _Creation:
    """Files created under one directory through directory handles (a symbolic link on the way is refused, not
    followed), undone unless every one of them was written: `init` promises all or nothing.

    The directory itself is the user's choice, links and all; everything below it is opened relative to its
    handle with O_NOFOLLOW, and each file with O_EXCL, so a link or file that appears after the check is
    refused at the write as well."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made_roots: list[Path] = []  # the directory and the parents init created for it
        self.folders: dict[str, int] = {}  # folder under root ("" is root) -> open handle
        self.made: list[tuple[str, str, bool]] = []  # (folder, name, is a folder) in the order created

    def __enter__(self) -> _Creation:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is not None:
                self._undo()
        finally:
            for handle in self.folders.values():
                os.close(handle)

    def occupied(self, path: str) -> bool:
        """Something is at `path` already, or a folder on its way is a file; a link on the way is refused."""
        if not self.root.exists():
            return False
        folder = ""
        *parents, name = path.split("/")
        for part in parents:
            kind = self._kind(folder, part)
            if kind == "link":
                self._refuse_link(folder + part)
            if kind != "folder":
                return kind is not None
            folder = self._open(folder, part)
        return self._kind(folder, name) is not None

    def create(self, path: str, data: bytes) -> None:
        *parents, name = path.split("/")
        folder = ""
        for part in parents:
            folder = self._enter(folder, part)
        self._attempt(path, lambda: self._write(folder, name, data))

    def _kind(self, folder: str, name: str) -> Literal["folder", "file", "link"] | None:
        try:
            mode = os.lstat(name, dir_fd=self._handle(folder)).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._fail(folder + name, exc)
        if stat.S_ISLNK(mode):
            return "link"
        return "folder" if stat.S_ISDIR(mode) else "file"

    def _refuse_link(self, path: str) -> NoReturn:
        raise UserError(
            f"refusing to write through {path} in {self.root}: it is a symbolic link",
            hint="init writes only inside the directory given: replace the link with a folder, "
            "or run init in another directory",
        )

    def _handle(self, folder: str) -> int:
        if not self.folders:
            self._make_root()
            self.folders[""] = self._attempt("", lambda: os.open(self.root, os.O_RDONLY | os.O_DIRECTORY))
        return self.folders[folder]

    def _make_root(self) -> None:
        for path in reversed([p for p in (self.root, *self.root.parents) if not p.exists()]):
            try:
                os.mkdir(path)
            except OSError as exc:
                self._fail("", exc)
            self.made_roots.append(path)

    def _enter(self, folder: str, name: str) -> str:
        """`folder/name/`, created if absent and opened, never through a symbolic link."""
        if f"{folder}{name}/" not in self.folders:
            try:
                os.mkdir(name, dir_fd=self._handle(folder))
                self.made.append((folder, name, True))
            except FileExistsError:
                pass
            except OSError as exc:
                self._fail(folder + name, exc)
        return self._open(folder, name)

    def _open(self, folder: str, name: str) -> str:
        inner = f"{folder}{name}/"
        if inner in self.folders:
            return inner
        try:
            self.folders[inner] = os.open(name, _NO_FOLLOW_DIR, dir_fd=self._handle(folder))
        except OSError as exc:
            kind = self._kind(folder, name)
            if kind == "link":
                self._refuse_link(folder + name)
            if kind == "file":
                raise UserError(
                    f"refusing to overwrite existing files in {self.root}: {folder}{name}",
                    hint="move it away, or run init in another directory",
                ) from None
            self._fail(folder + name, exc)
        return inner

    def _write(self, folder: str, name: str, data: bytes) -> None:
        # O_EXCL: a file or link that appeared since the check is neither overwritten nor followed
        handle = os.open(name, _NEW_FILE, 0o666, dir_fd=self._handle(folder))
        self.made.append((folder, name, False))
        with os.fdopen(handle, "wb") as out:
            out.write(data)

    def _attempt(self, path: str, step: Callable[[], _T]) -> _T:
        try:
            return step()
        except OSError as exc:
            self._fail(path, exc)

    def _fail(self, path: str, exc: OSError) -> NoReturn:
        raise UserError(
            f"cannot write {self.root / path if path else self.root}: {exc.strerror or exc}",
            hint="choose a directory you can write to",
        ) from None

    def _undo(self) -> None:
        """Remove what this run created, newest first; what was there before is never touched."""
        for folder, name, is_folder in reversed(self.made):
            with contextlib.suppress(OSError):
                if is_folder:
                    os.rmdir(name, dir_fd=self.folders[folder])
                else:
                    os.unlink(name, dir_fd=self.folders[folder])
        for path in reversed(self.made_roots):
            with contextlib.suppress(OSError):
                os.rmdir(path)


def check_seeds(settings: ScaffoldSettings) -> None:
    """The names and the chart version as the JSON Schema would judge them, said in terms of what was asked."""
    if not settings.clusters:
        raise UserError("no cluster to set up", hint="name at least one cluster and its install mode")
    seen: set[str] = set()
    for seed in settings.clusters:
        if not re.fullmatch(_schema_pattern("cluster", "properties", "name"), seed.name):
            raise UserError(
                f"cluster name {seed.name!r} is not allowed",
                hint="lowercase letters, digits and '-', starting and ending with a letter or digit",
            )
        if seed.name in seen:
            raise UserError(f"cluster {seed.name!r} is named twice", hint="give each cluster once")
        seen.add(seed.name)
    if not re.fullmatch(_schema_pattern("version"), settings.chart_version):
        raise UserError(
            f"KAI chart version {settings.chart_version!r} is not a version", hint="give a chart tag such as v0.16.7"
        )


def _schema_pattern(*keys: str) -> str:
    """The `pattern` of a definition in the JSON Schema of kai-gitops.yaml: one rule, not a copy of it."""
    value: JSONValue = expect_object(schema(), SCHEMA_FILE)["$defs"]
    for key in (*keys, "pattern"):
        value = expect_object(value, SCHEMA_FILE)[key]
    if not isinstance(value, str):
        raise TypeError(f"{SCHEMA_FILE}: {'.'.join(keys)} has no pattern")
    return value


def repo_config_text(settings: ScaffoldSettings) -> str:
    lines = [
        f"# yaml-language-server: $schema=./{SCHEMA_FILE}",
        "# kai-gitops repository configuration, one entry per cluster (docs/configuration.md).",
        "apiVersion: kai-gitops/v1",
        "clusters:",
    ]
    for seed in settings.clusters:
        lines += cluster_entry(seed, settings.chart_version)
    lines.append(f"waiversFile: {WAIVERS_FILE}")
    if len(settings.clusters) > 1:
        lines += rollout_hint(settings.clusters[0].name)
    return "\n".join(lines) + "\n"


def rollout_hint(first: str) -> list[str]:
    """A fleet's choice, commented: without waves every self-heal CronJob applies a merged commit at its next run."""
    return [
        "# Self-heal applies a merged commit on every cluster at its next run. To roll it out wave by wave",
        "# and halt at the first cluster it makes unhealthy (docs/fleet.md), uncomment; the clusters no wave",
        "# names go last.",
        "# rollout:",
        "#   waves:",
        f"#     - {{name: canary, clusters: [{first}], soak: 1h}}",
    ]


def cluster_entry(seed: ClusterSeed, version: str) -> list[str]:
    entry = [f"  - name: {seed.name}"]
    if seed.mode == "addon":
        entry += [
            "    mode: addon                      # the nvcf-compute-plane stack installs KAI",
            f"{'    kaiChartVersion: ' + version:<37}# the KAI version the stack pins",
        ]
        if version != DEFAULT_STACK_KAI_VERSION:  # the bundled stack's own pin needs no repeating
            entry.append(f"    stackKaiVersion: {version}")
        entry.append(f"    environmentFile: {environment_path(seed)}")
    else:
        entry += [
            "    mode: standalone                 # KAI installed with helm install and its own values",
            f"    kaiChartVersion: {version}",
            f"    kaiValuesFile: {kai_values_path(seed)}",
            f"    nvcaValuesFile: {nvca_values_path(seed)}",
        ]
    return entry + _data("init/shared-cluster.yaml").splitlines()  # a choice to make, none acted upon


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
    return {
        path: header + "\n" + canonical_values_body(),
        nvca_values_path(seed): _template("nvca-operator-values.yaml", cluster=seed.name, path=path, version=version),
    }


def canonical_values_body() -> str:
    """The canonical KAI values without the file's own licence header: the settings, in the guide's order."""
    lines = _data("canonical-kai-values.yaml").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    return "".join(lines[start:]).rstrip("\n") + "\n"


def _template(name: str, **values: str) -> str:
    return Template(_data(f"init/{name}")).substitute(values)


def _data(name: str) -> str:
    return resources.files("reconciler").joinpath(f"data/{name}").read_text(encoding="utf-8")
