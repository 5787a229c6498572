"""A synthetic GitOps repository of many clusters for the fleet benchmark (and its smoke test).

Half the clusters are add-on mode (an env file each; every third one vendors the stack's base.yaml, the
rest use the bundled copy), half standalone (KAI values, NVCA values and a queue file each). Every file
is distinct — names, registries, quotas, gate lists and queue counts vary — so a parse cache keyed by
content cannot cheat by finding them all equal; only the vendored base.yaml is shared, as it would be.
About one cluster in eight carries a mistake the policies catch, so the report is not empty.

    python bench/fleet_repo.py DIR [--clusters N]
"""

from __future__ import annotations

import argparse
import random
import shutil
from importlib import resources
from pathlib import Path

import pygit2

VERSIONS = ("v0.12.13", "v0.13.4", "v0.14.7", "v0.15.3", "v0.16.8", "v0.17.0")
EXTRA_GATES = ("SelfHosted", "LogPosting", "BYOObservability", "InfraResourceOverhead")
WAIVERS = """\
waivers:
  - rule: KAI-V-001
    subject: '*'
    cluster: fleet-0007
    reason: benchmark waiver
    owner: platform-team
    expires: "2099-12-31"
"""


def cluster_name(i: int) -> str:
    return f"fleet-{i:04d}"


def _env_file(rng: random.Random, i: int, *, broken: bool) -> str:
    gates = ", ".join(f'"{g}"' for g in rng.sample(EXTRA_GATES, rng.randint(1, 3)))
    dynamo = "true" if broken else "false"
    return f"""\
# nvcf-compute-plane environment for {cluster_name(i)}.
global:
  helm:
    sources:
      registry: "nvcr.io"
      repository: "org-{i:04d}/team-{rng.randint(1, 99)}"
  image:
    registry: nvcr.io
    repository: org-{i:04d}/team-{rng.randint(1, 99)}
  imagePullSecrets:
    - name: nvcr-pull-secret-{i}
  nvcaOperator:
    selfManaged:
      icmsServiceURL: http://api.sis-{i}.svc.cluster.local:8080
      revalServiceURL: http://reval.nvcf.svc.cluster.local:{8000 + i % 1000}
      natsURL: nats://nats.nats-system.svc.cluster.local:4222
      featureGateValues: [{gates}]

observability:
  profile: compute

addons:
  kaiScheduler:
    enabled: true
  topologyAwareScheduling:
    enabled: {"true" if i % 5 == 0 else "false"}
  groveOperator:
    enabled: false
  dynamoOperator:
    enabled: {dynamo}
"""


def _resources(indent: str, quota: int) -> str:
    return "".join(
        f"{indent}{res}:\n{indent}  quota: {quota}\n{indent}  limit: -1\n{indent}  overQuotaWeight: 1\n"
        for res in ("cpu", "gpu", "memory")
    )


def _kai_values(rng: random.Random, i: int, *, broken: bool) -> str:
    strategy = "spread" if broken else "binpack"
    child_quota = 0 if broken else -1
    return f"""\
# KAI Scheduler values for {cluster_name(i)}.
scheduler:
  placementStrategy: {strategy}
  plugins:
    nodeplacement:
      arguments:
        gpu: binpack
        cpu: spread
  actions:
    preempt:
      enabled: false
    consolidation:
      enabled: false

defaultQueue:
  createDefaultQueue: true
  parentName: default-parent-queue
  childName: default-queue
  parentResources:
{_resources("    ", -1)}  childResources:
{_resources("    ", child_quota)}"""


def _nvca_values(rng: random.Random, i: int) -> str:
    gates = ", ".join(f'"{g}"' for g in ["DynamicGPUDiscovery", *rng.sample(EXTRA_GATES, 2), "KAIScheduler"])
    return f"""\
# NVCA operator values for {cluster_name(i)}.
ngcConfig:
  clusterSource: self-managed
selfManaged:
  featureGateValues: [{gates}]
"""


def _queues(rng: random.Random, i: int) -> str:
    docs = []
    for q in range(rng.randint(2, 8)):
        gpus = rng.choice([4, 8, 16, 32])
        docs.append(f"""\
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: team-{i:04d}-{q}
spec:
  parentQueue: default-parent-queue
  resources:
    cpu: {{quota: {gpus * 8000}, limit: {gpus * 16000}, overQuotaWeight: 1}}
    gpu: {{quota: {gpus}, limit: {gpus * 2}, overQuotaWeight: 1}}
    memory: {{quota: {gpus * 64000}, limit: {gpus * 128000}, overQuotaWeight: 1}}
""")
    return "---\n".join(docs)


def _cluster_entry(rng: random.Random, i: int, files: dict[str, str]) -> str:
    name = cluster_name(i)
    broken = i % 8 == 7
    if i % 2 == 0:
        env = f"environments/{name}.yaml"
        files[env] = _env_file(rng, i, broken=broken)
        base = "    stackBaseFile: stack/base.yaml\n" if i % 3 == 0 else ""
        return (
            f"  - name: {name}\n    kubeContext: {name}\n    mode: addon\n    kaiChartVersion: v0.16.7\n"
            f"    environmentFile: {env}\n{base}    sharedCluster:\n      intent: dedicated\n"
        )
    folder = f"clusters/{name}"
    files[f"{folder}/kai-values.yaml"] = _kai_values(rng, i, broken=broken)
    files[f"{folder}/nvca-operator-values.yaml"] = _nvca_values(rng, i)
    files[f"{folder}/queues.yaml"] = _queues(rng, i)
    nodes = ", ".join(f"{name}-gpu-{n}" for n in range(rng.randint(1, 4)))
    return (
        f"  - name: {name}\n    kubeContext: {name}\n    mode: standalone\n"
        f"    kaiChartVersion: {rng.choice(VERSIONS)}\n    kaiValuesFile: {folder}/kai-values.yaml\n"
        f"    nvcaValuesFile: {folder}/nvca-operator-values.yaml\n"
        f"    sharedCluster:\n      intent: shared\n      nodes: [{nodes}]\n"
        f"    queueFiles:\n      - {folder}/queues.yaml\n"
    )


def fleet_files(n: int, seed: int = 10) -> dict[str, str]:
    rng = random.Random(seed)
    files: dict[str, str] = {
        "stack/base.yaml": resources.files("reconciler").joinpath("data/stack/base.yaml").read_text(),
        "kai-gitops-waivers.yaml": WAIVERS,
    }
    entries = [_cluster_entry(rng, i, files) for i in range(n)]
    files["kai-gitops.yaml"] = (
        "apiVersion: kai-gitops/v1\nclusters:\n" + "".join(entries) + "waiversFile: kai-gitops-waivers.yaml\n"
    )
    return files


def write_fleet_repo(target: Path, n: int, seed: int = 10) -> str:
    """A working copy at `target` with one commit holding the fleet; returns the commit id."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    repo = pygit2.init_repository(str(target), initial_head="main")
    for rel, text in fleet_files(n, seed).items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text)
    repo.index.add_all()
    repo.index.write()
    signature = pygit2.Signature("kai-gitops bench", "bench@example.invalid", 1764400000, 0)
    tree = repo.index.write_tree()
    return str(repo.create_commit("HEAD", signature, signature, f"{n} clusters", tree, []))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", type=Path)
    parser.add_argument("--clusters", type=int, default=300)
    args = parser.parse_args()
    print(write_fleet_repo(args.target, args.clusters))


if __name__ == "__main__":
    main()
