"""The live cluster source against a real HTTP Kubernetes API test server: reads, selectors, paging, faults."""

from __future__ import annotations

import copy
import dataclasses
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from reconciler.checks import nvca
from reconciler.core.errors import UserError
from reconciler.model.helm import encode_release_secret
from reconciler.sources.cluster import ReadProgress, ReadSettings, cluster_reader, read_live
from reconciler.sources.cluster.client import _retry_after
from tests.support.cluster_source import (
    DEMO,
    FAST,
    Obj,
    Recorder,
    client_for,
    lab_items,
    prod_items,
    read_state,
    run_cli,
    serve,
    write_kubeconfig,
)
from tests.support.helpers import timeless
from tests.support.kubeserver import Fault, KubeTestServer

# -- cluster builders --------------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[KubeTestServer]:
    with KubeTestServer() as srv:
        yield srv


@pytest.fixture
def prod(server: KubeTestServer) -> KubeTestServer:
    serve(server, prod_items())
    return server


def extra_pods(n: int) -> list[Obj]:
    return [DEMO._pod(f"fn-x-{i}", "nvcf-backend", "kai-scheduler", "Running", queue="default-queue") for i in range(n)]


def requests_to(server: KubeTestServer, path: str) -> list[Any]:
    return [r for r in server.requests if r.path == path]


# -- healthy and broken clusters ---------------------------------------------------------------------


def test_healthy_cluster_reads_into_live_state(server: KubeTestServer, tmp_path: Path) -> None:
    serve(server, lab_items())
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"lab": server.url})
    live = cluster_reader(str(kubeconfig), None, settings=FAST)("lab")
    assert live.source == "live cluster (context lab)"
    assert live.queue_kind_served and "queues.scheduling.run.ai" in live.crds
    assert sorted(live.queues) == ["default-parent-queue", "default-queue", "research"]
    assert live.queues["default-queue"].parent == "default-parent-queue"
    assert [(r.name, r.namespace, r.chart_version) for r in live.releases] == [
        ("kai-scheduler", "kai-scheduler", "v0.14.7")
    ]
    assert live.shard and live.shard["placementStrategy"] == {"gpu": "binpack", "cpu": "binpack"}
    assert live.nodes_total == 3 and live.schedule_labels == {"lab-gpu-1": "true", "lab-gpu-2": "true"}
    assert [p.name for p in live.nvcf_pods] == ["fn-a-0"] and [p.name for p in live.kai_pods] == [
        "kai-scheduler-default-1"
    ]
    assert live.dto_capabilities == ["DynamicGPUDiscovery", "SelfHosted", "KAIScheduler"]
    assert [b.agent_status for b in live.backends] == ["healthy"]
    assert live.healthz and live.healthz.http_status == 200 and live.healthz.queue_component() == ("healthy", [])
    assert nvca.predict(live.queues, kind_served=live.queue_kind_served).healthy


def _broken(mutate: Callable[[dict[str, Obj]], None]) -> list[Obj]:
    items = lab_items()
    queues = {i["metadata"]["name"]: i for i in items if i["kind"] == "Queue"}
    mutate(queues)
    return [i for i in items if i["kind"] != "Queue"] + [q for q in queues.values() if q is not None]


def _set(queue: str, resource: str, **triple: float) -> Callable[[dict[str, Obj]], None]:
    def mutate(queues: dict[str, Obj]) -> None:
        queues[queue]["spec"]["resources"][resource].update(triple)

    return mutate


BROKEN_CLUSTERS: dict[str, tuple[list[Obj] | None, str]] = {
    "missing-queue": (_broken(lambda q: q.pop("default-queue")), nvca.NOT_FOUND),
    "hierarchy": (_broken(lambda q: q["default-queue"]["spec"].pop("parentQueue")), nvca.HIERARCHY),
    "cpu": (
        _broken(_set("default-parent-queue", "cpu", quota=0)),
        "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, overQuotaWeight=1,"
        " got limit=-1, quota=0, overQuotaWeight=1",
    ),
    "gpu": (
        _broken(_set("default-queue", "gpu", limit=1000000)),
        "GPU resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1,"
        " got limit=1e+06, quota=-1, overQuotaWeight=1",
    ),
    "memory": (
        _broken(_set("default-queue", "memory", overQuotaWeight=0.5)),
        "Memory resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1,"
        " got limit=-1, quota=-1, overQuotaWeight=0.5",
    ),
    "not-installed": (None, nvca.NOT_INSTALLED),
}


@pytest.mark.parametrize("case", sorted(BROKEN_CLUSTERS))
def test_every_nvca_message_branch(server: KubeTestServer, case: str) -> None:
    items, expected = BROKEN_CLUSTERS[case]
    serve(server, copy.deepcopy(items) if items is not None else lab_items(), kai_installed=items is not None)
    live = read_state(server)
    verdict = nvca.predict(live.queues, kind_served=live.queue_kind_served)
    assert verdict.errors == (expected,)
    if case == "not-installed":
        assert not live.queue_kind_served and live.queues == {} and live.shard is None
        assert not any(r.path.startswith("/apis/scheduling.run.ai/v2/") for r in server.requests)


def test_unhealthy_nvca_answers_503_with_its_body(prod: KubeTestServer) -> None:
    live = read_state(prod)
    assert live.healthz is not None and live.healthz.reachable and live.healthz.http_status == 503
    status, errors = live.healthz.queue_component()
    assert status == "unhealthy" and errors[0].startswith("CPU resource violation for queue default-parent-queue")


def not_ready_nvca() -> list[Obj]:
    """NVCA installed (its Service exists) but no pod ready: no canned answer, so 503 "no endpoints"."""
    return [
        *(i for i in lab_items() if i["kind"] != "NVCAHealthz"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nvca", "namespace": "nvca-system"}},
    ]


def test_unreachable_nvca_is_reported_not_fatal(server: KubeTestServer) -> None:
    serve(server, not_ready_nvca())
    sink = Recorder()
    read_live(client_for(server), sink)
    [healthz] = sink.kinds("NVCAHealthz")
    assert healthz["httpStatus"] == 503 and healthz["body"] is None and healthz["reachable"] is False
    assert "no endpoints available" in healthz["detail"]


def test_unreachable_nvca_reaches_live_state(server: KubeTestServer) -> None:
    serve(server, not_ready_nvca())
    live = read_state(server)
    assert live.healthz is not None and live.healthz.reachable is False and "no endpoints" in live.healthz.detail


def test_hung_nvca_costs_two_short_tries_and_is_reported(prod: KubeTestServer) -> None:
    prod.inject_fault(Fault(r"/proxy/healthz$", delay_s=1.0, times=-1))
    sink = Recorder()
    read_live(client_for(prod), sink)
    [healthz] = sink.kinds("NVCAHealthz")
    assert healthz["reachable"] is False and "read timed out after 2 attempts" in healthz["detail"]


def test_forbidden_healthz_proxy_is_fatal(prod: KubeTestServer) -> None:
    prod.inject_fault(Fault(r"/proxy/healthz$", status=403, times=-1))
    with pytest.raises(UserError) as caught:
        read_state(prod)
    assert re.search(
        r"reading NVCA /healthz .*HTTP 403.*grant this identity `get` on services/proxy", caught.value.line()
    )


def test_second_kai_release_in_another_namespace(prod: KubeTestServer) -> None:
    live = read_state(prod)
    assert [(r.namespace, r.name, r.revision) for r in live.releases] == [
        ("kai-scheduler", "kai-scheduler", 2),
        ("runai", "kai", 4),
    ]
    assert live.releases[1].values["global"]["registryPassword"] == "<redacted>"


# -- what goes over the wire -------------------------------------------------------------------------


def test_large_lists_are_paged_with_limit(prod: KubeTestServer) -> None:
    prod.add_many([DEMO._node(f"extra-{i}", None) for i in range(5)])
    prod.add_many(extra_pods(5))
    live = read_state(prod)
    assert live.nodes_total == 9 and len(live.nvcf_pods) == 7
    for path in ("/api/v1/nodes", "/api/v1/pods"):
        seen = requests_to(prod, path)
        assert len(seen) >= 3 and all(r.query.get("limit") == "2" for r in seen)
        assert sum("continue" in r.query for r in seen) == len(seen) - 1


def test_server_side_selectors(prod: KubeTestServer) -> None:
    read_state(prod)
    queries = {
        (r.path, tuple(sorted((k, v) for k, v in r.query.items() if k not in ("limit", "continue"))))
        for r in prod.requests
    }
    assert ("/api/v1/pods", (("labelSelector", "icms-request-id"),)) in queries
    assert ("/api/v1/namespaces/nvcf-backend/pods", (("labelSelector", "!icms-request-id"),)) in queries
    assert ("/api/v1/namespaces", (("labelSelector", "nvca.nvcf.nvidia.io/workload-instance-type"),)) in queries
    assert (
        "/api/v1/secrets",
        (("fieldSelector", "type=helm.sh/release.v1"), ("labelSelector", "owner=helm")),
    ) in queries
    assert ("/api/v1/events", (("fieldSelector", "involvedObject.kind=Pod,reason=Unschedulable"),)) in queries
    # Never a whole-cluster pod list, never a namespaced Secret read.
    assert not [r for r in prod.requests if r.path == "/api/v1/pods" and "labelSelector" not in r.query]
    assert not [r for r in prod.requests if "/secrets" in r.path and r.path != "/api/v1/secrets"]


def test_events_only_for_pending_pods(prod: KubeTestServer) -> None:
    prod.add(
        DEMO._obj(
            "v1",
            "Event",
            "fn-llama-0.1",
            "nvcf-backend",
            reason="Unschedulable",
            involvedObject={"kind": "Pod", "namespace": "nvcf-backend", "name": "fn-llama-0"},
            message="old news about a running pod",
        )
    )
    sink = Recorder()
    read_live(client_for(prod), sink)
    assert [e["involvedObject"]["name"] for e in sink.kinds("Event")] == ["fn-llama-1"]


def test_no_events_read_when_nothing_is_pending(server: KubeTestServer) -> None:
    serve(server, lab_items())
    read_state(server)
    assert not requests_to(server, "/api/v1/events")


def test_pods_are_reduced_and_deduplicated(prod: KubeTestServer) -> None:
    pod = DEMO._pod("fn-big", "nvcf-backend", "kai-scheduler", "Running", queue="default-queue")
    pod["spec"]["containers"][0]["env"] = [{"name": "API_KEY", "value": "do-not-keep"}]
    pod["metadata"]["annotations"] = {"big": "x" * 1000}
    prod.add(pod)
    sink = Recorder()
    read_live(client_for(prod), sink)
    pods = sink.kinds("Pod")
    assert len({(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods}) == len(pods)
    [big] = [p for p in pods if p["metadata"]["name"] == "fn-big"]
    assert set(big) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert set(big["metadata"]) <= {"name", "namespace", "labels", "creationTimestamp"}
    assert big["spec"] == {"schedulerName": "kai-scheduler"} and "do-not-keep" not in orjson.dumps(sink.items).decode()


# -- faults ------------------------------------------------------------------------------------------

PODS = r"^/api/v1/pods$"
FAULTS: dict[str, tuple[Fault, int]] = {  # fault (consumed once per `times`), attempts that path then sees
    "429-retry-after": (Fault(PODS, status=429, retry_after=1, times=1), 2),
    "500": (Fault(PODS, status=500, times=2), 3),
    "503": (Fault(PODS, status=503, times=2), 3),
    "504": (Fault(PODS, status=504, times=1), 2),
    "timeout": (Fault(PODS, delay_s=1.0, times=1), 2),
    "reset": (Fault(PODS, reset=True, times=2), 3),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_fault_recovers_with_retries(prod: KubeTestServer, case: str) -> None:
    fault, attempts = FAULTS[case]
    prod.inject_fault(fault)
    started = time.monotonic()
    live = read_state(prod, dataclasses.replace(FAST, page_limit=500))
    elapsed = time.monotonic() - started
    assert [p.name for p in live.nvcf_pods] == ["fn-llama-0", "fn-llama-1"]
    time.sleep(0.7 if case == "timeout" else 0)  # the delayed answer is logged when the server gives up waiting
    assert len(requests_to(prod, "/api/v1/pods")) == attempts
    if case == "429-retry-after":
        assert elapsed >= 0.95  # Retry-After: 1 honoured instead of the 5 ms backoff


def test_expired_continue_restarts_the_list(prod: KubeTestServer) -> None:
    prod.add_many(extra_pods(5))
    prod.inject_fault(Fault(PODS, expire_continue=True, times=1))
    sink = Recorder()
    read_live(client_for(prod), sink)
    first_pages = [r for r in requests_to(prod, "/api/v1/pods") if "continue" not in r.query]
    assert len(first_pages) == 2  # started over from the beginning
    assert [r.status for r in requests_to(prod, "/api/v1/pods")].count(410) == 1
    names = [p["metadata"]["name"] for p in sink.kinds("Pod") if p["metadata"]["namespace"] == "nvcf-backend"]
    assert sorted(names) == sorted(["fn-llama-0", "fn-llama-1", *[f"fn-x-{i}" for i in range(5)]])


FOREVER: dict[str, tuple[Fault, str]] = {
    "429": (Fault(PODS, status=429, retry_after=0, times=-1), "HTTP 429 (Too many requests"),
    "500": (Fault(PODS, status=500, times=-1), "HTTP 500 (Internal error occurred: injected fault) after 5 attempts"),
    "503": (
        Fault(PODS, status=503, times=-1),
        "HTTP 503 (the server is currently unable to handle the request) after 5 attempts in",
    ),
    "timeout": (Fault(PODS, delay_s=1.0, times=-1), "read timed out after 5 attempts"),
    "reset": (Fault(PODS, reset=True, times=-1), "connection reset after 5 attempts"),
    "410": (Fault(PODS, expire_continue=True, times=-1), "HTTP 410"),
    "403": (Fault(PODS, status=403, times=-1), "HTTP 403"),
}


@pytest.mark.parametrize("case", sorted(FOREVER))
def test_fault_forever_fails_with_one_line(prod: KubeTestServer, case: str) -> None:
    fault, expected = FOREVER[case]
    prod.add_many(extra_pods(3))  # more than one page, so there is a continue token to expire
    prod.inject_fault(fault)
    with pytest.raises(UserError) as caught:
        read_state(prod)
    line = caught.value.line()
    shown = f" at {prod.url}" if case in ("reset", "timeout") else ""  # no answer: which server it was
    assert "\n" not in line and line.startswith(
        f"reading pods from context test{shown} (GET /api/v1/pods?labelSelector="
    )
    assert expected in line
    if case == "403":
        assert len(requests_to(prod, "/api/v1/pods")) == 1 and "grant this identity" in line  # never retried


def test_retry_budget_bounds_total_time(prod: KubeTestServer) -> None:
    prod.inject_fault(Fault(PODS, status=503, times=-1))
    slow = dataclasses.replace(FAST, attempts=100, backoff_base_s=0.1, backoff_cap_s=0.1, retry_budget_s=0.5)
    started = time.monotonic()
    with pytest.raises(UserError, match=r"HTTP 503 .* after \d+ attempts in 0\.\d s"):
        read_state(prod, slow)
    assert time.monotonic() - started < 2.0


def test_forbidden_on_list_is_not_retried(prod: KubeTestServer) -> None:
    prod.inject_fault(Fault(r"^/api/v1/nodes$", status=404, times=-1))
    with pytest.raises(UserError, match=r"reading nodes .*HTTP 404"):
        read_state(prod)
    assert len(requests_to(prod, "/api/v1/nodes")) == 1


def test_connection_refused_is_retried_then_one_line(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kc", {"gone": "http://127.0.0.1:9"}, current="gone")
    with pytest.raises(UserError) as caught:
        cluster_reader(str(kubeconfig), None, settings=FAST)(None)
    assert "connection refused after 5 attempts" in caught.value.line()


@pytest.mark.parametrize("command", ["doctor", "snapshot"])
def test_connection_refused_names_the_server_and_the_context_to_check(tmp_path: Path, command: str) -> None:
    """A refused connection is about where the kubeconfig points: the line names that server (never its
    userinfo or query) and says which context was used and how to pick another."""
    from tests.support.helpers import assert_one_line_error, run_cli

    server = "https://admin:hunter2@127.0.0.1:9/k8s/clusters/c-1?token=PLANTEDquery0123"
    kubeconfig = write_kubeconfig(tmp_path / "kc", {"staging": server}, current="staging")
    output = ["-o", tmp_path / "snap.yaml"] if command == "snapshot" else []
    code, out, err = run_cli(
        [command, *output, "--kubeconfig", kubeconfig],
        env={"KAI_GITOPS_KUBE_ATTEMPTS": "1", "KAI_GITOPS_LOG_FORMAT": "text"},
    )
    line = assert_one_line_error(
        code,
        out,
        err,
        "from context staging at https://127.0.0.1:9/k8s/clusters/c-1 (GET",
        "connection refused",
        "kubectl config get-contexts",
        "--context",
    )
    assert "hunter2" not in line and "admin" not in line and "PLANTED" not in line


def test_retry_after_forms() -> None:
    assert _retry_after({"Retry-After": "3"}) == 3.0
    assert _retry_after({}) is None
    assert _retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert _retry_after({"Retry-After": "soon"}) is None


# -- kubeconfig --------------------------------------------------------------------------------------


def test_context_selection_between_two_clusters(tmp_path: Path) -> None:
    with KubeTestServer() as prod_server, KubeTestServer() as lab_server:
        serve(prod_server, prod_items())
        serve(lab_server, lab_items())
        kubeconfig = str(
            write_kubeconfig(tmp_path / "kc", {"prod": prod_server.url, "lab": lab_server.url}, current="prod")
        )
        assert "research" in cluster_reader(kubeconfig, "lab", settings=FAST)("prod").queues  # --context wins
        assert "research" not in cluster_reader(kubeconfig, None, settings=FAST)("prod").queues
        assert "research" in cluster_reader(kubeconfig, None, settings=FAST)("lab").queues  # repo's kubeContext
        assert cluster_reader(kubeconfig, None, settings=FAST)(None).source == "live cluster (context prod)"


def test_kubeconfig_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kubeconfig = str(write_kubeconfig(tmp_path / "kc", {"prod": "http://127.0.0.1:9", "lab": "http://127.0.0.1:9"}))
    with pytest.raises(UserError) as caught:
        cluster_reader(kubeconfig, "staging")(None)
    assert "kube context 'staging' (--context) not found" in caught.value.line()
    assert "known contexts: prod, lab" in caught.value.line()
    with pytest.raises(UserError, match=r"kubeContext in kai-gitops\.yaml"):
        cluster_reader(kubeconfig, None)("staging")
    with pytest.raises(UserError, match="no current-context"):
        cluster_reader(kubeconfig, None)(None)
    with pytest.raises(UserError, match=r"kubeconfig file not found: .*missing"):
        cluster_reader(str(tmp_path / "missing"), None)(None)
    (tmp_path / "broken").write_text("clusters: [unclosed\n")
    with pytest.raises(UserError, match="cannot read kubeconfig"):
        cluster_reader(str(tmp_path / "broken"), None)(None)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(UserError, match="no kubeconfig found"):
        cluster_reader(None, None)(None)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(UserError, match="in-cluster service account"):
        cluster_reader(None, None)("prod")  # the repo's kubeContext is ignored in-cluster
    with pytest.raises(UserError, match="--context needs a kubeconfig"):
        cluster_reader(None, "prod")(None)


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAI_GITOPS_KUBE_ATTEMPTS", "7")
    monkeypatch.setenv("KAI_GITOPS_KUBE_READ_TIMEOUT_S", "2.5")
    assert ReadSettings.from_env() == dataclasses.replace(ReadSettings(), attempts=7, read_timeout_s=2.5)
    monkeypatch.setenv("KAI_GITOPS_KUBE_ATTEMPTS", "many")
    with pytest.raises(UserError, match="KAI_GITOPS_KUBE_ATTEMPTS must be a number"):
        ReadSettings.from_env()


# -- through the CLI ---------------------------------------------------------------------------------


@pytest.fixture
def gitops_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    return repo


def findings(output: str) -> list[Obj]:
    """Findings of a JSON report, with pod ages (which move between two reads) and run times masked."""
    report = orjson.loads(output)
    found = [timeless(f) for cluster in report.get("clusters", [report]) for f in cluster["findings"]]
    return orjson.loads(re.sub(rb'"age_s":\s*[0-9.e+]+', b'"age_s":0', orjson.dumps(found)))


@pytest.mark.parametrize("command", ["diff", "doctor"])
@pytest.mark.parametrize(
    ("cluster", "items", "context"), [("prod-addon", prod_items, "prod"), ("lab-standalone", lab_items, "lab")]
)
def test_cli_live_read_equals_snapshot(
    command: str,
    cluster: str,
    items: Callable[[], list[Obj]],
    context: str,
    server: KubeTestServer,
    gitops_repo: Path,
    tmp_path: Path,
) -> None:
    from reconciler.sources.snapshot_writer import snapshot_command

    serve(server, items())
    kubeconfig = str(write_kubeconfig(tmp_path / "kc", {context: server.url}, current=context))
    base = [command, "--repo", str(gitops_repo), "--cluster", cluster, "-o", "json"]
    live = run_cli([*base, "--kubeconfig", kubeconfig])
    assert live.exit_code in (0, 2), live.stderr
    assert live.stderr == ""  # no progress display without a terminal
    snapshot = tmp_path / "snapshot.yaml"
    snapshot_command(str(snapshot), kubeconfig, None, settings=FAST)
    saved = run_cli([*base, "--snapshot", str(snapshot)])
    assert saved.exit_code == live.exit_code, saved.stderr
    assert findings(live.stdout) == findings(saved.stdout)
    live_report, saved_report = orjson.loads(live.stdout), orjson.loads(saved.stdout)
    for key in ("nvca", "healthz", "summary"):
        assert live_report[key] == saved_report[key]
    if cluster == "prod-addon":
        assert findings(live.stdout) and live_report["nvca"]["kai-scheduler-queues"]["status"] == "unhealthy"
    else:
        assert live_report["nvca"]["kai-scheduler-queues"] == {"status": "healthy", "errors": []}


def test_cli_failing_read_is_one_line_exit_1(prod: KubeTestServer, gitops_repo: Path, tmp_path: Path) -> None:
    kubeconfig = str(write_kubeconfig(tmp_path / "kc", {"prod": prod.url}))
    prod.inject_fault(Fault(PODS, status=503, times=-1))
    result = run_cli(
        ["diff", "--repo", str(gitops_repo), "--cluster", "prod-addon", "--kubeconfig", kubeconfig, "-o", "json"]
    )
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert re.match(
        r"kai-gitops: error: reading pods from context prod \(GET /api/v1/pods\?labelSelector="
        r"icms-request-id&limit=2\): HTTP 503 \(.*\) after 5 attempts in \d+\.\d s\n$",
        result.stderr,
    )


def test_cli_unknown_context_is_one_line(prod: KubeTestServer, tmp_path: Path) -> None:
    kubeconfig = str(write_kubeconfig(tmp_path / "kc", {"prod": prod.url}))
    result = run_cli(["doctor", "--kubeconfig", kubeconfig, "--context", "nope"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("kai-gitops: error: ") and result.stderr.count("\n") == 1


# -- small parts -------------------------------------------------------------------------------------


def test_progress_counts_and_display_lifecycle() -> None:
    progress = ReadProgress("context test", enabled=True, delay_s=0.01)
    with progress:
        progress.count("pods", "a", 3)
        progress.count("pods", "b", 4)
        progress.count("nodes", "n", 2)
        time.sleep(0.1)
    assert progress.counts() == {"pods": 7, "nodes": 2}
    assert "pods 7 · nodes 2" in progress._text()


def test_release_secret_pages_are_summarised(prod: KubeTestServer) -> None:
    other = {
        "name": "gpu-operator",
        "namespace": "gpu-operator",
        "version": 1,
        "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "gpu-operator", "version": "v24.9.0"}},
        "config": {"driver": {"licensingConfig": "x"}},
        "manifest": "---\n",
    }
    prod.add(encode_release_secret(other))
    sink = Recorder()
    read_live(client_for(prod), sink)
    assert not sink.kinds("Secret")
    assert sorted(s["metadata"]["name"] for s in sink.kinds("HelmReleaseSummary")) == [
        "kai",
        "kai-scheduler",
        "kai-scheduler",
    ]


# -- kai-config and every SchedulingShard ----------------------------------------------------------------


def _kai_config(spec: Obj, **meta: Any) -> Obj:
    return {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {"name": "kai-config", **meta},
        "spec": spec,
        "status": {
            "conditions": [
                {
                    "type": "Available",
                    "status": "False",
                    "reason": "available",
                    "message": "Binder: not available; token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                }
            ]
        },
    }


def test_kai_config_and_every_shard_are_read_and_snapshotted(server: KubeTestServer, tmp_path: Path) -> None:
    from reconciler.sources.snapshot import read_snapshot
    from reconciler.sources.snapshot_writer import SnapshotWriter

    extra_shards = [
        {
            "apiVersion": "kai.scheduler/v1",
            "kind": "SchedulingShard",
            "metadata": {"name": name},
            "spec": {"partitionLabelValue": name},
        }
        for name in ("team-a", "team-b")
    ]
    operands = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "binder",
                "namespace": "kai-scheduler",
                "ownerReferences": [{"kind": "Config", "name": "kai-config", "uid": "u-1", "controller": True}],
            },
            "spec": {"replicas": 2, "template": {}},
            "status": {"updatedReplicas": 2, "availableReplicas": 1},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": "scheduler",
                "namespace": "kai-scheduler",
                "creationTimestamp": "2026-10-01T09:00:00Z",
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "kai-config-deployer", "namespace": "kai-scheduler"},
            "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]},
        },
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kai-scheduler", "namespace": "kai-scheduler"},
            "spec": {
                "holderIdentity": "kai-scheduler-default-1",
                "leaseDurationSeconds": 15,
                "renewTime": "2026-10-01T08:00:00.000000Z",
            },
        },
    ]
    serve(
        server,
        [
            *[i for i in lab_items() if i["kind"] != "Config"],
            *operands,
            _kai_config({"admission": {"gpuSharing": True}}),
            *extra_shards,
            {**_kai_config({}), "metadata": {"name": "not-the-singleton"}},
        ],
    )
    live = read_state(server)
    assert live.kai_config_read and live.kai_config is not None
    assert live.kai_config.spec == {"admission": {"gpuSharing": True}} and live.kai_config.uid
    assert "ghp_" not in str(live.kai_config.conditions)  # the operator's messages are free text
    assert sorted(live.shards) == ["default", "team-a", "team-b"]
    assert live.shards["team-a"].spec == {"partitionLabelValue": "team-a"}
    assert requests_to(server, "/apis/kai.scheduler/v1/schedulingshards")  # one paged list
    assert not requests_to(server, "/apis/kai.scheduler/v1/schedulingshards/default")
    # the snapshot written from the same read gives the same objects back
    path = tmp_path / "snap.yaml"
    with SnapshotWriter(str(path)) as writer:
        read_live(client_for(server), writer)
        writer.commit()
    again = read_snapshot(str(path))
    assert again.kai_config == live.kai_config and again.shards == live.shards and again.kai_config_read
    # what the operator deployed, in kai-scheduler
    assert [(o.name, o.owners, o.replicas, o.updated, o.available) for o in live.operands] == [
        ("binder", (("Config", "kai-config", "u-1"),), 2, 2, 1)
    ]
    assert live.service_accounts == {"scheduler": "2026-10-01T09:00:00Z"}
    assert live.deployer_job_failed == "BackoffLimitExceeded"
    assert live.scheduler_lease is not None and live.scheduler_lease[1] == 15
    assert (again.operands, again.service_accounts, again.deployer_job_failed) == (
        live.operands,
        live.service_accounts,
        live.deployer_job_failed,
    )
    assert again.scheduler_lease is not None and again.scheduler_lease[1] == 15


def test_a_missing_kai_config_is_read_as_missing_not_unread(server: KubeTestServer) -> None:
    serve(server, [i for i in lab_items() if i["kind"] != "Config"])
    live = read_state(server)
    assert live.kai_config is None and live.kai_config_read
    with KubeTestServer() as bare:
        serve(bare, lab_items(), kai_installed=False)
        assert not read_state(bare).kai_config_read  # Config kind not served: nothing to say


def test_kai_pods_keep_when_each_restarted_container_last_ended_and_other_pods_do_not(server: KubeTestServer) -> None:
    """KAI-O-008 reads the scheduler's restarts; the cluster's other pods (50,000 of them) stay as small as before."""
    restarted = {
        "containerStatuses": [
            {
                "name": "scheduler",
                "restartCount": 2,
                "image": "x",
                "imageID": "sha256:1",
                "ready": True,
                "lastState": {
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "message": "401 Unauthorized",
                        "startedAt": "2026-10-01T08:00:00Z",
                        "finishedAt": "2026-10-01T09:00:07Z",
                    }
                },
            },
            {"name": "sidecar", "restartCount": 0, "lastState": {}},
        ]
    }
    items = lab_items()
    for pod in (i for i in items if i["kind"] == "Pod"):
        pod["status"] |= copy.deepcopy(restarted)
    serve(server, items)
    live = read_state(server)
    [kai] = live.kai_pods
    assert kai.restarts == (("scheduler", 2, "2026-10-01T09:00:07Z"),)
    assert [p.restarts for p in live.nvcf_pods] == [()]
