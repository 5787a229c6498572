"""Shared builders for the foundation tests: real Git repos, snapshot files, Kubernetes objects, CLI runs.

Everything here builds *real* inputs (pygit2 repositories on disk, snapshot files on disk) so the tests
exercise the same code paths an operator's run does. Fixture files under tests/fixtures are only read.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pygit2
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
TEMPLATE = ROOT / "repo-templates" / "gitops-repo"
DEMO = ROOT / "repo-templates" / "demo"
DEMO_SNAPSHOTS = DEMO / "snapshots"
DATA = ROOT / "reconciler" / "data"

CANONICAL_KAI_VALUES = (FIXTURES / "nvcf" / "standalone-kai-values.yaml").read_text()
LOCAL_ENV = (FIXTURES / "nvcf" / "compute-plane-environment-local.yaml").read_text()

UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
CHART_DEFAULT = {"quota": 0, "limit": -1, "overQuotaWeight": 1}
RESOURCES = ("cpu", "gpu", "memory")

FileContent = str | bytes | None  # None deletes the file in that commit
Files = Mapping[str, FileContent]

_SIGNATURE_TIME = 1764400000


def helm_template(path: Path) -> bool:
    """A Helm chart's template is Go template text that helm renders, not YAML any reader of kai-gitops reads."""
    return any(part.name == "templates" and (part.parent / "Chart.yaml").is_file() for part in path.parents)


# -- Git ---------------------------------------------------------------------------------------------


def _write_files(root: Path, files: Files) -> None:
    for rel, content in files.items():
        path = root / rel
        if content is None:
            if path.exists():
                path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def commit_files(repo_path: Path, files: Files, message: str = "change") -> str:
    """Write `files` into the working copy at `repo_path`, stage everything and commit on HEAD."""
    repo = pygit2.Repository(str(repo_path))
    _write_files(Path(repo.workdir), files)
    index = repo.index
    index.add_all()
    for rel, content in files.items():
        if content is None:
            with contextlib.suppress(KeyError, OSError, pygit2.GitError):
                index.remove(rel)
    index.write()
    tree = index.write_tree()
    stamp = _SIGNATURE_TIME + len(list(repo.walk(repo.head.target))) if not repo.head_is_unborn else _SIGNATURE_TIME
    sig = pygit2.Signature("kai-gitops tests", "tests@example.invalid", stamp, 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return str(repo.create_commit("HEAD", sig, sig, message, tree, parents))


def make_repo(
    tmp_path: Path, files: Files, commits: Sequence[Files] = (), *, name: str = "repo", branch: str = "main"
) -> tuple[Path, list[str]]:
    """A working-copy repository with one commit of `files`, then one commit per entry of `commits`.

    Returns the repository path and the commit ids, oldest first.
    """
    path = tmp_path / name
    path.mkdir(parents=True, exist_ok=True)
    pygit2.init_repository(str(path), initial_head=branch)
    ids = [commit_files(path, files, "initial")]
    for i, change in enumerate(commits, start=1):
        ids.append(commit_files(path, change, f"change {i}"))
    return path, ids


def make_bare_remote(tmp_path: Path, source: Path, *, name: str = "remote.git") -> Path:
    """A bare clone of `source`, registered in `source` as remote `origin` so tests can push to it."""
    bare = tmp_path / name
    pygit2.clone_repository(str(source), str(bare), bare=True)
    repo = pygit2.Repository(str(source))
    if "origin" not in [r.name for r in repo.remotes]:
        repo.remotes.create("origin", str(bare))
    return bare


def push(source: Path, refspecs: Iterable[str] = ("refs/heads/main:refs/heads/main",)) -> None:
    pygit2.Repository(str(source)).remotes["origin"].push(list(refspecs))


def file_url(path: Path) -> str:
    return "file://" + str(path)


# -- repo config texts -------------------------------------------------------------------------------


def standalone_config(
    *,
    name: str = "lab",
    version: str = "v0.14.7",
    values: str = "kai-values.yaml",
    nvca: str | None = None,
    queue_files: Sequence[str] = (),
    extra: str = "",
    shared: str | None = "dedicated",
) -> str:
    """`shared`: the sharedCluster intent written, or None for an entry that declares none (NVCA-S-003)."""
    text = (
        f"apiVersion: kai-gitops/v1\nclusters:\n  - name: {name}\n    mode: standalone\n"
        f"    kaiChartVersion: {version}\n    kaiValuesFile: {values}\n"
    )
    if nvca:
        text += f"    nvcaValuesFile: {nvca}\n"
    if queue_files:
        text += "    queueFiles:\n" + "".join(f"      - {q}\n" for q in queue_files)
    if shared is not None:  # last, so that the lines above keep their numbers
        text += f"    sharedCluster: {{intent: {shared}}}\n"
    return text + extra


def addon_config(
    *,
    name: str = "prod",
    version: str = "v0.16.7",
    env: str = "env.yaml",
    extra: str = "",
    shared: str | None = "dedicated",
) -> str:
    text = (
        f"apiVersion: kai-gitops/v1\nclusters:\n  - name: {name}\n    mode: addon\n"
        f"    kaiChartVersion: {version}\n    environmentFile: {env}\n"
    )
    return text + (f"    sharedCluster: {{intent: {shared}}}\n" if shared is not None else "") + extra


def desired_for(tmp_path: Path, files: Files, cluster: str | None = None, *, ref: str = "HEAD") -> Any:
    """Commit `files` to a fresh repo and build the DesiredCluster exactly as the pipeline does."""
    from reconciler.app.pipeline import desired_clusters, open_desired
    from reconciler.app.settings import GitSettings

    path, _ = make_repo(tmp_path, files)
    repo = open_desired(GitSettings(str(path), ref))
    chosen = desired_clusters(repo, cluster)
    assert len(chosen) == 1, "desired_for expects exactly one cluster"
    return chosen[0]


def template_files(*edits: tuple[str, str, str], **extra: str | None) -> dict[str, str | None]:
    """repo-templates/gitops-repo as {path: text}, with (file, old, new) edits applied (each must apply).

    `extra` adds or replaces files; `__` in a keyword stands for `/` (policy__x.rego is policy/x.rego).
    """
    files: dict[str, str | None] = {
        p.relative_to(TEMPLATE).as_posix(): p.read_text() for p in sorted(TEMPLATE.rglob("*")) if p.is_file()
    }
    for file, old, new in edits:
        text = files[file]
        assert text is not None and old in text, (file, old)
        files[file] = text.replace(old, new, 1)
    files.update({k.replace("__", "/"): v for k, v in extra.items()})
    return files


def held_fields(description: str) -> dict[str, list[str]]:
    """`not written by kai-gitops: a, b (reason); c (reason) — tail` as {reason: [fields]}."""
    listed = description.removeprefix("not written by kai-gitops: ").split(" — ")[0]
    groups = {}
    for group in listed.split("; "):
        fields, _, reason = group.partition(" (")
        groups[reason.removesuffix(")")] = fields.split(", ")
    return groups


# -- Kubernetes objects --------------------------------------------------------------------------------


def obj(api: str, kind: str, name: str, namespace: str | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta.update(rest.pop("metadata", {}))
    return {"apiVersion": api, "kind": kind, "metadata": meta, **rest}


def crd(name: str) -> dict[str, Any]:
    return obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)


def queue(
    name: str,
    triple: Mapping[str, Any] | None = None,
    parent: str | None = None,
    *,
    resources: Mapping[str, Any] | None = None,
    no_resources: bool = False,
) -> dict[str, Any]:
    """A KAI Queue; `triple` applies to cpu/gpu/memory alike, `resources` gives them one by one."""
    spec: dict[str, Any] = {}
    if not no_resources:
        if resources is not None:
            spec["resources"] = {k: dict(v) for k, v in resources.items()}
        else:
            spec["resources"] = {r: dict(triple if triple is not None else UNLIMITED) for r in RESOURCES}
    if parent:
        spec["parentQueue"] = parent
    return obj("scheduling.run.ai/v2", "Queue", name, spec=spec)


def default_queues(triple: Mapping[str, Any] = UNLIMITED) -> list[dict[str, Any]]:
    return [queue("default-parent-queue", triple), queue("default-queue", triple, "default-parent-queue")]


def canonical_shard() -> dict[str, Any]:
    """Shard default as the canonical values render it, once the operator has reconciled it (KAI-O-007)."""
    shard = obj(
        "kai.scheduler/v1",
        "SchedulingShard",
        "default",
        spec={
            "partitionLabelValue": "",
            "placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
            "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
            "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}},
        },
        status={"conditions": [dict(c) for c in RECONCILED_CONDITIONS]},
    )
    shard["metadata"]["generation"] = 1
    return shard


# What the KAI operator's status reconciler writes once generation 1 is deployed and every operand is available.
RECONCILED_CONDITIONS = [
    {"type": t, "status": s, "reason": r, "message": m, "observedGeneration": 1}
    for t, s, r, m in (
        ("Reconciling", "False", "reconciled", "Reconciliation completed successfully"),
        ("Deployed", "True", "deployed", "Resources deployed"),
        ("Available", "True", "available", "System available"),
        ("DependenciesFulfilled", "True", "dependencies_fulfilled", "Dependencies are fulfilled"),
        ("Ready", "True", "ready", "System is ready"),
    )
]


def release_payload(
    name: str = "kai-scheduler",
    namespace: str = "kai-scheduler",
    revision: int = 1,
    status: str = "deployed",
    version: str = "v0.14.7",
    config: Any = None,
    chart: str = "kai-scheduler",
) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "version": revision,
        "info": {"status": status},
        "chart": {"metadata": {"name": chart, "version": version, "appVersion": version}},
        "config": config if config is not None else {},
        "manifest": "---\n",
    }


def release_secret(**kwargs: Any) -> dict[str, Any]:
    from reconciler.model.helm import encode_release_secret

    return encode_release_secret(release_payload(**kwargs))


def node(name: str, schedule: str | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if schedule is not None:
        labels["nvca.nvcf.nvidia.io/schedule"] = schedule
    return obj("v1", "Node", name, metadata={"labels": labels})


def pod(
    name: str,
    namespace: str,
    *,
    scheduler: str | None = "kai-scheduler",
    phase: str = "Running",
    queue_label: str | None = None,
    nvcf_label: bool = False,
    ready: bool = True,
    created: str | None = None,
) -> dict[str, Any]:
    labels: dict[str, str] = {}
    if nvcf_label:
        labels["icms-request-id"] = f"req-{name}"
    if queue_label:
        labels["kai.scheduler/queue"] = queue_label
    meta: dict[str, Any] = {"labels": labels}
    if created:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "example.invalid/x:1"}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return obj(
        "v1",
        "Pod",
        name,
        namespace,
        metadata=meta,
        spec=spec,
        status={"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    )


def healthz_item(http_status: int, body: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kai-gitops/v1",
        "kind": "NVCAHealthz",
        "metadata": {"name": "nvca"},
        "httpStatus": http_status,
        "body": body,
    }


def kai_crds() -> list[dict[str, Any]]:
    return [crd("queues.scheduling.run.ai"), crd("schedulingshards.kai.scheduler"), crd("podgroups.scheduling.run.ai")]


def live_state(items: Iterable[dict[str, Any]], **builder_kwargs: Any) -> Any:
    from reconciler.model.live import LiveStateBuilder

    builder = LiveStateBuilder("test", **builder_kwargs)
    for item in items:
        builder.add(item)
    return builder.finish()


# -- snapshot files --------------------------------------------------------------------------------------


def snapshot_file(
    tmp_path: Path, items: Sequence[dict[str, Any]], *, fmt: str = "yaml", name: str = "snapshot"
) -> Path:
    """Write `items` as a Kubernetes List, the way `kubectl get … -o yaml|json` does."""
    document = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(items)}
    path = tmp_path / f"{name}.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps(document, indent=2))
    else:
        from ruamel.yaml import YAML

        yaml = YAML(typ="safe", pure=True)
        yaml.default_flow_style = False
        with path.open("w") as out:
            yaml.dump(document, out)
    return path


# -- CLI ---------------------------------------------------------------------------------------------------


def run_cli(args: Sequence[Any], env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """Run `kai-gitops ARGS` in-process. click 8.2+ always keeps stderr apart (no `mix_stderr` any more)."""
    from click.testing import CliRunner

    from reconciler.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], env=dict(env) if env else None)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"exception escaped the CLI guard: {result.exception!r}")
    return result.exit_code, result.stdout, result.stderr


def timeless(report: Any) -> Any:
    """A JSON report without the times that say when its run ran (`generatedAt`, each finding's `firstSeen`):
    two runs over the same input find the same, a second or more apart."""
    if isinstance(report, dict):
        return {k: timeless(v) for k, v in report.items() if k not in ("generatedAt", "firstSeen")}
    if isinstance(report, list):
        return [timeless(v) for v in report]
    return report


def assert_one_line_error(code: int, stdout: str, stderr: str, *needles: str) -> str:
    """Exit 1, exactly one stderr line `kai-gitops: error: …` containing every needle, no traceback."""
    assert code == 1, (code, stdout, stderr)
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith("kai-gitops: error: "), line
    assert "Traceback" not in stderr and "Traceback" not in stdout
    for needle in needles:
        assert needle in line, (needle, line)
    return line


# -- demo ----------------------------------------------------------------------------------------------------


def load_demo_builder() -> ModuleType:
    """repo-templates/demo/build.py, imported from its path (it is not part of the package)."""
    return _load_path("kai_gitops_demo_build", DEMO / "build.py")


def load_fleet_builder() -> ModuleType:
    """bench/fleet_repo.py: the fleet benchmark's repository generator (write_fleet_repo, fleet_files)."""
    return _load_path("kai_gitops_fleet_repo", ROOT / "bench" / "fleet_repo.py")


def _load_path(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A user rule as an operator would write it: its own package, its own id, data under data.user.
USER_RULE = """package kai_gitops.rules.user.acme.queue_budget

meta := {
	"id": "ACME-Q-100",
	"title": "Extra queues stay within the GPU budget",
	"severity": "warning",
	"scope": "static",
	"rationale": "Each team queue has a fixed GPU budget.",
	"remediation": "Lower spec.resources.gpu.limit of the queue.",
	"source": "Acme platform handbook",
}

violations contains v if {
	some q in input.desired.extra_queues
	q.resources.gpu.limit > data.user.queue_budget.max_gpu_limit
	v := {
		"message": sprintf("queue %s has gpu limit %v, above the budget of %v",
			[q.name, q.resources.gpu.limit, data.user.queue_budget.max_gpu_limit]),
		"subject": {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "namespace": null, "name": q.name},
		"doc": q.doc,
		"path": ["spec", "resources", "gpu", "limit"],
		"fix": null,
	}
}
"""


# -- policy engine ----------------------------------------------------------------------------------------


@pytest.fixture
def no_policies(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests of the drift/exit-code machinery itself: policy findings are out of their scope."""
    monkeypatch.setattr("reconciler.app.evaluate.evaluate_policies", lambda *args, **kwargs: [])
