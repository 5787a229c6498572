"""Benchmark: the CRD-schema check of KAI manifests (KAI-V-020..022), ours vs the naive way, same run.

Ours compiles one validator per (KAI version, kind, apiVersion) and keeps it for the run; the naive way calls
`jsonschema.validate(manifest, schema)` per manifest, which checks the schema itself and builds a validator
every time. Two inputs: the demo repository (`repo-templates/demo/build.py repo`, its pull request commit), and
one cluster with N Queue manifests in its queue file, every tenth with a misspelt field. The error counts of
both ways are compared. Prints one JSON object as the last line.

    python bench/manifest_schema.py [--quick]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reconciler.app.pipeline import desired_clusters, open_desired
from reconciler.app.settings import GitSettings
from reconciler.checks.manifest_schema import manifest_schema_findings
from reconciler.model import crd_schemas
from reconciler.model.crd_schemas import ServedKind, crd_version_for, to_json_schema
from reconciler.model.desired import DesiredCluster
from tests.support.helpers import make_repo, standalone_config

ROOT = Path(__file__).resolve().parent.parent


def _queues(count: int) -> str:
    docs = []
    for i in range(count):
        quota = "qouta" if i % 10 == 0 else "quota"
        docs.append(
            f"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: team-{i}\nspec:\n"
            f"  parentQueue: default-parent-queue\n  resources:\n    gpu: {{{quota}: 1, limit: 2}}\n"
        )
    return "---\n".join(docs)


def _ours(clusters: list[DesiredCluster]) -> tuple[float, int]:
    started = time.perf_counter()
    found = sum(len(manifest_schema_findings(d)) for d in clusters)
    return round(time.perf_counter() - started, 4), found


def _naive(clusters: list[DesiredCluster]) -> tuple[float, int]:
    """Each manifest validated with jsonschema.validate against its pinned version's schema, read and converted."""
    started = time.perf_counter()
    errors = 0
    for desired in clusters:
        version = crd_version_for(desired.config.kai_chart_version)
        for doc_id, doc in desired.docs.items():
            if not doc_id.startswith(("queues:", "kai_manifests:")) or not isinstance(doc.data, dict):
                continue
            served = ServedKind(version, str(doc.data["kind"]), str(doc.data["apiVersion"]))
            index = json.loads((ROOT / "reconciler/data/crds/index.json").read_text())
            file = index[version]["kinds"][served.kind][served.api_version]
            schema = to_json_schema(json.loads((ROOT / "reconciler/data/crds" / file).read_text()))
            try:
                jsonschema.validate(doc.data, schema, cls=jsonschema.Draft4Validator)
            except jsonschema.ValidationError:
                errors += 1
    return round(time.perf_counter() - started, 4), errors


def _clusters(repo: Path) -> list[DesiredCluster]:
    return desired_clusters(open_desired(GitSettings(str(repo), "HEAD")), None)


def _compare(clusters: list[DesiredCluster]) -> dict[str, object]:
    crd_schemas._validator.cache_clear()
    cold, found = _ours(clusters)  # the first run of a process compiles the validators it needs
    warm, _ = _ours(clusters)
    naive, naive_errors = _naive(clusters)
    return {
        "manifests": sum(1 for d in clusters for i in d.docs if i.startswith(("queues:", "kai_manifests:"))),
        "ours_first_s": cold,
        "ours_again_s": warm,
        "naive_s": naive,
        "findings": found,
        "manifests_with_errors_naive": naive_errors,
    }


def main() -> None:
    queues = 200 if "--quick" in sys.argv else 2_000
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        subprocess.run(
            [sys.executable, str(ROOT / "repo-templates/demo/build.py"), "repo", str(demo)],
            check=True,
            capture_output=True,
        )
        many, _ = make_repo(
            Path(tmp),
            {
                "kai-gitops.yaml": standalone_config(version="v0.17.0", queue_files=["queues.yaml"]),
                "kai-values.yaml": "{}\n",
                "queues.yaml": _queues(queues),
            },
            name="many",
        )
        rows = {"demo repository": _compare(_clusters(demo)), f"{queues} queues": _compare(_clusters(many))}
    for name, row in rows.items():
        print(f"{name}: {row}", file=sys.stderr)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
