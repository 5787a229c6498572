"""The seed's trap, for real (SPEC §4.2): real Helm installs KAI with chart defaults, the user guide's
`helm upgrade` leaves the default queues at quota 0, kai-gitops finds it from the release Secret Helm wrote,
fixes the queues, and no later `helm upgrade` or `helm uninstall` undoes the fix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.real.kai_cluster import CHART, CHILD, GUIDE_VALUES, KAI_NAMESPACE, PARENT, RELEASE, SHARDS, KaiCluster
from tests.support.envtest import EnvTest

UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
CHART_DEFAULT = {"quota": 0, "limit": -1, "overQuotaWeight": 1}
VIOLATION = ("CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, "
             "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1")
REASON = ("The chart renders the default queues only on `helm install` and keeps them "
          "(helm.sh/resource-policy: keep), so `helm upgrade` will not fix this.")


@pytest.fixture
def cluster(envtest: EnvTest, tmp_path: Path) -> Iterator[KaiCluster]:
    made = KaiCluster(envtest, tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_the_trap_is_found_fixed_and_stays_fixed(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    for name in (PARENT, CHILD):   # the upgrade rendered no queue: they keep the install's chart defaults
        queue = cluster.queue(name)
        assert queue["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        assert queue["spec"]["resources"] == {r: CHART_DEFAULT for r in ("cpu", "gpu", "memory")}
    assert cluster.queue(CHILD)["spec"]["parentQueue"] == PARENT
    shard = cluster.custom.get_cluster_custom_object(*SHARDS, "default")   # rendered again on upgrade
    assert shard["spec"]["plugins"] == {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}}

    diff = cluster.run("diff")
    assert diff.code == 2, diff
    for name, line in ((PARENT, "clusters/lab/kai-values.yaml:23:7"), (CHILD, "clusters/lab/kai-values.yaml:36:7")):
        assert f"~ Queue/{name} KAI-D-002  {line}" in diff.out
    assert diff.out.count(REASON) == 2
    assert "cpu.quota              0 → -1" in diff.out
    assert f"NVCA prediction kai-scheduler-queues: unhealthy\n  {VIOLATION}" in diff.out
    assert "KAI-R-0" not in diff.out   # the release Secret real Helm wrote: one release, pinned version, Git's values

    applied = cluster.run("reconcile", "--apply")
    # 2: NVCA's /healthz cannot be read (no agent runs here), which only an operator can look into
    assert applied.code == 2, applied
    assert "! operator NVCA-H-004 Service/nvca-system/nvca" in applied.out
    assert "Apply complete: 2 applied, 0 failed, 0 not applied (of 2)." in applied.out
    assert "warning:" not in applied.out
    assert "NVCA prediction (after apply) kai-scheduler-queues: healthy" in applied.out
    for name in (PARENT, CHILD):
        assert cluster.triples(name) == {r: UNLIMITED for r in ("cpu", "gpu", "memory")}

    doctor = cluster.run("doctor")
    assert doctor.code == 0, doctor
    assert "NVCA prediction kai-scheduler-queues: healthy" in doctor.out

    cluster.helm("upgrade", RELEASE, str(CHART), "--namespace", KAI_NAMESPACE, "-f", str(GUIDE_VALUES))
    again = cluster.run("diff")
    assert again.code == 0 and "Drift" not in again.out and "Plan: 0 to create, 0 to change" in again.out, again
    kept = cluster.helm("uninstall", RELEASE, "--namespace", KAI_NAMESPACE)
    assert "[SchedulingShard] default" in kept   # the queues left the manifest on the first upgrade
    for name in (PARENT, CHILD):
        assert cluster.triples(name) == {r: UNLIMITED for r in ("cpu", "gpu", "memory")}
