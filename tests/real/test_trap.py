"""The seed's trap, for real (docs/index.md, The trap it catches): real Helm installs KAI with chart
defaults, the user guide's `helm upgrade` leaves the default queues at quota 0, kai-gitops finds it from the
release Secret Helm wrote, fixes the queues, and no later `helm upgrade` or `helm uninstall` undoes the fix."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.demo_cluster import nvca_agent
from tests.support.kai_cluster import (
    CHART,
    CHILD,
    GUIDE_VALUES,
    KAI_NAMESPACE,
    PARENT,
    RELEASE,
    SHARDS,
    KaiCluster,
    Result,
)
from tests.support.tools import is_ci

UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
CHART_DEFAULT = {"quota": 0, "limit": -1, "overQuotaWeight": 1}
VIOLATION = (
    "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, "
    "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"
)
REASON = (
    "The chart renders the default queues only on `helm install` and keeps them "
    "(helm.sh/resource-policy: keep), so `helm upgrade` will not fix this."
)


def test_the_trap_is_found_fixed_and_stays_fixed(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    for name in (PARENT, CHILD):  # the upgrade rendered no queue: they keep the install's chart defaults
        queue = cluster.queue(name)
        assert queue["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        assert queue["spec"]["resources"] == {r: CHART_DEFAULT for r in ("cpu", "gpu", "memory")}
    assert cluster.queue(CHILD)["spec"]["parentQueue"] == PARENT
    shard = cluster.custom.get_cluster_custom_object(*SHARDS, "default")  # rendered again on upgrade
    assert shard["spec"]["plugins"] == {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}}

    diff = cluster.run("diff")
    assert diff.code == 2, diff
    for name, line in ((PARENT, "clusters/lab/kai-values.yaml:23:7"), (CHILD, "clusters/lab/kai-values.yaml:36:7")):
        assert f"~ Queue/{name} KAI-D-002  {line}" in diff.out
    assert diff.out.count(REASON) == 2
    assert "cpu.quota              0 → -1" in diff.out
    assert f"NVCA prediction kai-scheduler-queues: unhealthy\n  {VIOLATION}" in diff.out
    # Nothing else: the release Secret real Helm wrote is the one release, at the pin, with Git's values
    # (no KAI-R-*, no KAI-D-004); only NVCA's /healthz cannot be read, as no agent runs here.
    assert set(re.findall(r"\b(?:KAI|NVCA)-[A-Z]-\d{3}\b", diff.out)) == {"KAI-D-002", "NVCA-H-002", "NVCA-H-004"}

    applied = cluster.run("reconcile", "--apply")
    # NVCA's /healthz cannot be read (no agent runs here): an operator's item, shown, but info (NVCA-H-004), below
    # --fail-on, so it fails nothing -- as doctor below exits 0 with it
    assert applied.code == 0, applied
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
    assert "[SchedulingShard] default" in kept  # the queues left the manifest on the first upgrade
    for name in (PARENT, CHILD):
        assert cluster.triples(name) == {r: UNLIMITED for r in ("cpu", "gpu", "memory")}


# -- NVCA's own verdict, through the real API server's service proxy -----------------------------------------


def nvca_answer(cluster: KaiCluster) -> tuple[int, dict[str, Any]]:
    """NVCA's /healthz in its own words (docs/policies.md, NVCA health check), written apart from the product's
    prediction, for the two states of this scenario: the parent queue at the chart default, or unlimited."""
    fixed = cluster.triples(PARENT)["cpu"] == UNLIMITED
    component = {"Status": "healthy", "Errors": []} if fixed else {"Status": "unhealthy", "Errors": [VIOLATION]}
    return (200 if fixed else 503), {"Status": component["Status"], "Components": {"kai-scheduler-queues": component}}


def healthz(result: Result) -> dict[str, object]:
    return json.loads(result.out)["healthz"]


def test_nvcas_own_verdict_through_the_service_proxy_agrees_before_and_after_the_fix(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    with nvca_agent(cluster.envtest, lambda: nvca_answer(cluster)) as address:
        if address is None:  # only loopback here; under CI a skip would hide the tier, so it fails
            why = "no non-loopback IPv4 address: the API server proxies only to Pod IPs outside 127.0.0.0/8"
            if is_ci():
                pytest.fail(why)
            pytest.skip(why)
        before = cluster.run("doctor", "-o", "json")
        assert before.code == 2, before
        assert healthz(before) == {
            "reachable": True,
            "httpStatus": 503,
            "status": "unhealthy",
            "detail": None,
            "kai-scheduler-queues": {"status": "unhealthy", "errors": [VIOLATION]},
        }
        rules = {f["rule"] for f in json.loads(before.out)["findings"]}
        assert "NVCA-H-004" not in rules and "NVCA-H-003" not in rules  # read, and NVCA agrees
        applied = cluster.run("reconcile", "--apply")
        assert applied.code == 0, applied  # nothing left: not even an operator's item
        assert "Apply complete: 2 applied" in applied.out
        after = cluster.run("doctor", "-o", "json")
        assert after.code == 0, after
        assert healthz(after)["kai-scheduler-queues"] == {"status": "healthy", "errors": []}
        assert healthz(after)["httpStatus"] == 200
