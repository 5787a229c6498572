"""KAI Resource Management on the real API server: its CRDs installed from tests/fixtures/krm, a Department, a
Project and a NodePool applied with kubectl, and `kai-gitops diff` reads them live and judges Git's default
queues and shard against what they generate (KAI-K-001, KAI-K-003) instead of the bare detection (KAI-D-010)."""

from __future__ import annotations

import json

from tests.support.envtest import EnvTest
from tests.support.envtest._server import load_crds
from tests.support.helpers import FIXTURES
from tests.support.kai_cluster import CHILD, PARENT, KaiCluster

KRM_CRDS = sorted((FIXTURES / "krm").glob("*.yaml"))

# The platform department's default-pool queue is named as Git's parent queue; the project's is named as Git's child
# queue (the name KRM would derive for it on the default node pool, <owner>; the CRD copied requires the name),
# parented to the department's queue.
KRM_OBJECTS = f"""\
apiVersion: kai.resources/v1alpha1
kind: Department
metadata:
  name: platform
spec:
  queues:
    - name: {PARENT}
      nodepool: default
      resources:
        gpu: {{deserved: -1, limit: -1, overQuotaWeight: 1}}
---
apiVersion: kai.resources/v1alpha1
kind: Project
metadata:
  name: {CHILD}
spec:
  parent: platform
  queues:
    - name: {CHILD}
      nodepool: default
      resources:
        gpu: {{deserved: -1, limit: -1, overQuotaWeight: 1}}
---
apiVersion: kai.resources/v1alpha1
kind: NodePool
metadata:
  name: default
spec: {{}}
"""


def test_projects_read_live_explain_the_queues_and_shard_git_declares(cluster: KaiCluster, envtest: EnvTest) -> None:
    cluster.install_trapped()
    before = json.loads(cluster.run("diff", "-o", "json").out)
    assert not [f for f in before["findings"] if f["rule"].startswith("KAI-K-") or f["rule"] == "KAI-D-010"]

    envtest._install_crds(load_crds(KRM_CRDS))
    manifest = cluster.tmp / "krm.yaml"
    manifest.write_text(KRM_OBJECTS)
    cluster.kubectl("apply", "-f", str(manifest))

    result = cluster.run("diff", "-o", "json")
    assert result.code in (0, 2), result
    found = {
        (f["rule"], f["subject"]["kind"], f["subject"]["name"]): f
        for f in json.loads(result.out)["findings"]
        if f["rule"].startswith("KAI-K-") or f["rule"] == "KAI-D-010"
    }
    assert set(found) == {
        ("KAI-K-001", "Queue", PARENT),
        ("KAI-K-001", "Queue", CHILD),
        ("KAI-K-003", "SchedulingShard", "default"),
    }, result
    child = found[("KAI-K-001", "Queue", CHILD)]
    assert f"Project {CHILD} spec.queues[0] (node pool default)" in child["message"]
    assert "takes it over" in child["message"] and child["location"]["file"] == "clusters/lab/kai-values.yaml"
    assert "Department platform" in found[("KAI-K-001", "Queue", PARENT)]["message"]
