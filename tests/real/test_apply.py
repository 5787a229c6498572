"""`reconcile --apply` with everything real: the API server's validation of Events, its server-side dry-run
and admission, its 409 on a resourceVersion precondition, managedFields as it records them, and a SIGTERM
while many writes are in flight. The cluster is the seed's trap (tests/support/kai_cluster.py)."""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import os
import signal
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from tests.support.envtest import EnvTest
from tests.support.envtest._pki import generate
from tests.support.helpers import run_cli
from tests.support.kai_cluster import CHILD, PARENT, KaiCluster, kai_gitops_command

SCHEDULE = "nvca.nvcf.nvidia.io/schedule"
QUOTAS = {f"{r}.quota" for r in ("cpu", "gpu", "memory")}


@pytest.fixture
def cluster(cluster: KaiCluster) -> KaiCluster:
    """The conftest's cluster, installed with the trap (the default queues at quota 0)."""
    cluster.install_trapped()
    return cluster


def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def applied_so_far(path: Path) -> int:
    """While the run writes it: a line may be half written, so count without parsing."""
    return path.read_text().count('"result":"applied"') if path.exists() else 0


def owned(entry: dict[str, Any], prefix: tuple[str, ...]) -> set[str]:
    """The leaf fields under `prefix` a managedFields entry owns, dotted (f:cpu/f:quota -> cpu.quota)."""
    node: Any = entry.get("fieldsV1") or {}
    for key in prefix:
        node = node.get(f"f:{key}") or {}
    leaves: set[str] = set()

    def walk(tree: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, sub in tree.items():
            if key == ".":
                continue
            here = (*path, key.removeprefix("f:"))
            if sub:
                walk(sub, here)
            else:
                leaves.add(".".join(here))

    walk(node, ())
    return leaves


def ours(events: list[Any]) -> list[Any]:
    """kai-gitops' Events (the API server's own controllers write some in `default` too)."""
    return [e for e in events if e.reporting_controller == "kai-gitops"]


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"]["managedFields"]}


# -- Events and managedFields ---------------------------------------------------------------------------


def test_events_pass_the_servers_validation_and_kubectl_describe_shows_them(cluster: KaiCluster) -> None:
    result = cluster.run("reconcile", "--apply")
    assert "Apply complete: 2 applied" in result.out and "warning:" not in result.out, result
    events = ours(kubernetes.client.EventsV1Api(cluster.client).list_namespaced_event("default").items)
    assert sorted(e.regarding.name for e in events) == sorted([CHILD, PARENT])
    for event in events:
        queue = cluster.queue(event.regarding.name)
        assert (event.reason, event.type, event.action) == ("QueueUpdated", "Normal", "Update")
        assert (event.reporting_controller, event.regarding.kind) == ("kai-gitops", "Queue")
        assert event.regarding.uid == queue["metadata"]["uid"]
        assert "spec.resources.cpu.quota 0 → -1" in event.note and "taken over from helm" in event.note
    described = cluster.kubectl("describe", "queue", CHILD)
    events_block = described.split("Events:", 1)[1]
    assert "QueueUpdated" in events_block and "kai-gitops" in events_block, described
    listed = cluster.kubectl("get", "events", "-n", "default", "--field-selector", f"involvedObject.name={PARENT}")
    assert "QueueUpdated" in listed


def test_events_on_nodes_with_the_longest_names_pass_the_servers_validation(envtest: EnvTest, tmp_path: Path) -> None:
    # The API server keeps 58 characters of a generateName: a 253-character name (the most a Node may have)
    # and a name whose 58th character is a dot must both give a generateName it accepts.
    longest = ".".join(["n" * 63] * 3 + ["n" * 61])
    dotted = "g" * 57 + ".rack-7"
    cluster = KaiCluster(envtest, tmp_path, shared_selector={"nvidia.com/gpu.present": "true"})
    try:
        cluster.install_trapped()
        for name in (longest, dotted):
            cluster.add_node(name, {"nvidia.com/gpu.present": "true"})
        result = cluster.run("reconcile", "--apply")
        assert "Apply complete: 4 applied" in result.out and "warning:" not in result.out, result
        events = ours(kubernetes.client.EventsV1Api(cluster.client).list_namespaced_event("default").items)
        assert sorted(e.regarding.name for e in events if e.regarding.kind == "Node") == sorted([longest, dotted])
        assert all(e.reason == "NodeLabelChanged" for e in events if e.regarding.kind == "Node")
        node = json.loads(cluster.kubectl("get", "node", dotted, "-o", "json", "--show-managed-fields"))
        assert owned(managers(node)["kai-gitops"], ()) == {f"metadata.labels.{SCHEDULE}"}  # all it owns
    finally:
        cluster.close()


def test_managed_fields_name_kai_gitops_for_exactly_the_fields_it_patched(cluster: KaiCluster) -> None:
    before = {name: cluster.queue(name) for name in (PARENT, CHILD)}
    assert set(managers(before[CHILD])) == {"helm"}
    assert cluster.run("reconcile", "--apply").code == 0  # the operator's item left (NVCA's /healthz) is info
    for name in (PARENT, CHILD):
        fields = managers(cluster.queue(name))
        assert set(fields) == {"helm", "kai-gitops"}
        assert fields["kai-gitops"]["operation"] == "Update"  # a merge patch, not server-side apply
        assert owned(fields["kai-gitops"], ()) == {f"spec.resources.{q}" for q in QUOTAS}
        helm_resources = owned(fields["helm"], ("spec", "resources"))
        assert helm_resources == {f"{r}.{f}" for r in ("cpu", "gpu", "memory") for f in ("limit", "overQuotaWeight")}
        assert "metadata.annotations.helm.sh/resource-policy" in owned(fields["helm"], ())
    assert "spec.parentQueue" in owned(managers(cluster.queue(CHILD))["helm"], ())


def test_deleted_default_queues_are_created_again_parent_first_and_owned_by_kai_gitops(cluster: KaiCluster) -> None:
    cluster.kubectl("delete", "queue", CHILD, PARENT)  # helm uninstall leaves them; an operator deleted them
    audit = cluster.tmp / "audit.jsonl"
    result = cluster.run("reconcile", "--apply", "--audit-log", audit)
    assert "Apply complete: 2 applied" in result.out and "warning:" not in result.out, result
    assert [(a["object"]["name"], a["operation"]) for a in audit_lines(audit) if a["result"] == "applied"] == [
        (PARENT, "create"),
        (CHILD, "create"),
    ]
    for name in (PARENT, CHILD):
        queue = cluster.queue(name)
        assert queue["spec"]["resources"] == {
            r: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")
        }
        assert set(managers(queue)) == {"kai-gitops"}
    assert cluster.queue(CHILD)["spec"]["parentQueue"] == PARENT
    events = ours(kubernetes.client.EventsV1Api(cluster.client).list_namespaced_event("default").items)
    assert sorted((e.regarding.name, e.reason, e.action) for e in events) == [
        (PARENT, "QueueCreated", "Create"),
        (CHILD, "QueueCreated", "Create"),
    ]


# -- dry-run and admission --------------------------------------------------------------------------------


@contextlib.contextmanager
def queues_frozen(cluster: KaiCluster, *, dry_runs_too: bool) -> Iterator[None]:
    """A ValidatingAdmissionPolicy (CEL, in the API server itself) refusing Queue writes: real ones only, or
    dry-runs too. The server loads policies through an informer: in force only once a probe is refused, and
    out of force only once a probe passes again (the next test's `helm install` must not meet it)."""
    expression = "false" if dry_runs_too else "request.dryRun == true"
    admission = kubernetes.client.AdmissionregistrationV1Api(cluster.client)
    admission.create_validating_admission_policy(
        {
            "metadata": {"name": "queues-frozen"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["scheduling.run.ai"],
                            "apiVersions": ["*"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["queues"],
                        }
                    ]
                },
                "validations": [{"expression": expression, "message": "queues are frozen: change window closed"}],
            },
        }
    )
    admission.create_validating_admission_policy_binding(
        {"metadata": {"name": "queues-frozen"}, "spec": {"policyName": "queues-frozen", "validationActions": ["Deny"]}}
    )
    _wait_for_probe(cluster, refused=True)
    try:
        yield
    finally:
        admission.delete_validating_admission_policy_binding("queues-frozen")
        admission.delete_validating_admission_policy("queues-frozen")
        _wait_for_probe(cluster, refused=False)


def _wait_for_probe(cluster: KaiCluster, *, refused: bool) -> None:
    probe = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "admission-probe"}}
    deadline = time.monotonic() + 30
    while True:
        try:
            cluster.custom.create_cluster_custom_object("scheduling.run.ai", "v2", "queues", probe)
        except kubernetes.client.ApiException as error:
            assert error.status == 422, error
            if refused:
                return
        else:
            cluster.custom.delete_cluster_custom_object("scheduling.run.ai", "v2", "queues", "admission-probe")
            if not refused:
                return
        assert time.monotonic() < deadline, "the admission policy did not come into (or out of) force"
        time.sleep(0.1)


def test_a_dry_run_the_server_refuses_aborts_the_plan_and_nothing_is_written(cluster: KaiCluster) -> None:
    before = {name: cluster.queue(name)["metadata"]["resourceVersion"] for name in (PARENT, CHILD)}
    with queues_frozen(cluster, dry_runs_too=True):
        result = cluster.run("reconcile", "--apply")
    assert result.code == 1, result
    assert "the server-side dry-run refused the plan, nothing was written" in result.err
    assert "queues are frozen: change window closed" in result.err
    assert {name: cluster.queue(name)["metadata"]["resourceVersion"] for name in (PARENT, CHILD)} == before
    assert "holderIdentity" not in cluster.lease()["spec"]  # released


def test_the_dry_run_writes_nothing_when_only_the_real_write_is_refused(cluster: KaiCluster) -> None:
    before = {name: cluster.queue(name) for name in (PARENT, CHILD)}
    audit = cluster.tmp / "audit.jsonl"
    with queues_frozen(cluster, dry_runs_too=False):
        result = cluster.run("reconcile", "--apply", "--audit-log", audit)
    assert result.code == 1, result
    assert f"✗ failed update Queue/{PARENT}: HTTP 422" in result.out
    assert f"- not applied update Queue/{CHILD}" in result.out
    # Both dry-runs were accepted and changed nothing: same resourceVersion, no kai-gitops manager.
    for name in (PARENT, CHILD):
        assert cluster.queue(name)["metadata"] == before[name]["metadata"]
    assert [(a["object"]["name"], a["result"]) for a in audit_lines(audit)] == [
        (PARENT, "started"),
        (PARENT, "failed"),
        (CHILD, "not-attempted"),
    ]
    assert ours(kubernetes.client.EventsV1Api(cluster.client).list_namespaced_event("default").items) == []


# -- a concurrent write between the plan's re-read and the write: the server's 409 -------------------------


def _concurrent_write(monkeypatch: pytest.MonkeyPatch, write: Any) -> None:
    """Run `write` right after the dry-run, i.e. after the product read each object again under its Lease
    and before it writes: the resourceVersion its patch carries is then out of date."""
    from reconciler.reconcile import run as steps

    real = steps.dry_run

    def dry_run_then_someone_writes(writer: Any, pending: Any) -> None:
        real(writer, pending)
        write()

    monkeypatch.setattr(steps, "dry_run", dry_run_then_someone_writes)


def test_a_409_from_an_unrelated_concurrent_write_is_read_again_and_applied(
    cluster: KaiCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    _concurrent_write(monkeypatch, lambda: cluster.kubectl("label", "queue", PARENT, "team=ml"))
    audit = cluster.tmp / "audit.jsonl"
    code, out, err = run_cli(cluster.args("reconcile", "--apply", "--audit-log", audit))
    assert "Apply complete: 2 applied, 0 failed" in out, (code, out, err)
    parent = cluster.queue(PARENT)
    assert parent["metadata"]["labels"]["team"] == "ml"  # the other write stands
    assert parent["spec"]["resources"]["cpu"]["quota"] == -1
    applied = next(a for a in audit_lines(audit) if a["object"]["name"] == PARENT and a["result"] == "applied")
    assert applied["resourceVersion"] == parent["metadata"]["resourceVersion"]


def test_a_409_from_a_concurrent_write_of_a_planned_field_stops_the_run(
    cluster: KaiCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch = json.dumps({"spec": {"resources": {"cpu": {"quota": 5}}}})
    _concurrent_write(monkeypatch, lambda: cluster.kubectl("patch", "queue", PARENT, "--type", "merge", "-p", patch))
    code, out, err = run_cli(cluster.args("reconcile", "--apply"))
    assert code == 1, (code, out, err)
    assert (
        f"✗ failed update Queue/{PARENT}: HTTP 409" in out
        and f"read again: Queue/{PARENT} spec.resources.cpu.quota is 5, the plan expected 0" in out
    ), out
    assert f"- not applied update Queue/{CHILD}" in out
    assert cluster.triples(PARENT)["cpu"]["quota"] == 5 and cluster.triples(CHILD)["cpu"]["quota"] == 0
    assert "kai-gitops" not in managers(cluster.queue(PARENT))


# -- a saved plan that went stale --------------------------------------------------------------------------


def test_a_saved_plan_is_refused_once_a_planned_field_changed_and_nothing_is_written(cluster: KaiCluster) -> None:
    plan = cluster.tmp / "plan.json"
    assert cluster.run("reconcile", "--plan-out", plan).code == 2
    cluster.kubectl(
        "patch", "queue", CHILD, "--type", "merge", "-p", json.dumps({"spec": {"resources": {"gpu": {"quota": 4}}}})
    )
    before = cluster.queue(PARENT)["metadata"]["resourceVersion"]
    result = cluster.run("reconcile", "--plan", plan, "--apply")
    assert result.code == 1, result
    assert (
        f"the plan is stale, nothing was written: Queue/{CHILD} spec.resources.gpu.quota is 4, the plan expected 0"
    ) in result.err
    assert cluster.queue(PARENT)["metadata"]["resourceVersion"] == before
    assert "holderIdentity" not in cluster.lease()["spec"]


# -- SIGTERM while many writes are in flight ---------------------------------------------------------------


NODES = 300


def test_sigterm_mid_apply_releases_the_lease_and_audits_exactly_what_the_server_holds(
    envtest: EnvTest, tmp_path: Path
) -> None:
    # A shared cluster whose GPU nodes all lack NVCA's schedule label: a plan of hundreds of label writes,
    # 16 at a time. SIGTERM (a CronJob's pod stopped) arrives while they run.
    cluster = KaiCluster(envtest, tmp_path, shared_selector={"nvidia.com/gpu.present": "true"})
    try:
        cluster.install_trapped()
        names = [f"lab-gpu-{i:03d}" for i in range(NODES)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: cluster.add_node(n, {"nvidia.com/gpu.present": "true"}), names))
        _interrupted_apply(cluster, names)
    finally:
        cluster.close()


@contextlib.contextmanager
def running(args: list[str]) -> Iterator[subprocess.Popen[str]]:
    """The installed kai-gitops with `args`, killed if the test leaves the block while it still runs."""
    proc = subprocess.Popen(
        [*kai_gitops_command(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def assert_interrupted(proc: subprocess.Popen[str], cluster: KaiCluster) -> None:
    """SIGTERM (a CronJob's pod stopped): exit 130 with one line, and the Lease released at once, not left to
    expire."""
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "kai-gitops: interrupted" in err, (proc.returncode, out, err)
    assert "holderIdentity" not in cluster.lease()["spec"]


def _interrupted_apply(cluster: KaiCluster, names: list[str]) -> None:
    audit = cluster.tmp / "audit.jsonl"
    args = cluster.args("reconcile", "--apply", "--max-changes", NODES + 10, "--audit-log", audit)
    with running(args) as proc:
        deadline = time.monotonic() + 60
        while applied_so_far(audit) < 20:  # the queues, then 18+ nodes
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.01)
        assert_interrupted(proc, cluster)
    lines = audit_lines(cluster.tmp / "audit.jsonl")
    outcomes: dict[str, list[str]] = {}
    for line in lines:
        if line["result"] != "started":
            outcomes.setdefault(line["object"]["name"], []).append(line["result"])
    assert sorted(outcomes) == sorted([PARENT, CHILD, *names])  # every change: exactly one outcome line
    assert all(len(results) == 1 for results in outcomes.values()), outcomes
    started = {line["object"]["name"] for line in lines if line["result"] == "started"}
    assert {n for n, (r,) in outcomes.items() if r != "not-attempted"} == started  # in flight: audited too
    labelled = {
        n.metadata.name
        for n in kubernetes.client.CoreV1Api(cluster.client).list_node(label_selector=f"{SCHEDULE}=true").items
    }
    applied_nodes = {n for n, (r,) in outcomes.items() if r == "applied" and n in names}
    assert labelled == applied_nodes  # the audit says exactly what the server holds
    assert 18 <= len(applied_nodes) < NODES, len(applied_nodes)
    assert {n for n, (r,) in outcomes.items() if r == "not-attempted"}, "nothing was left: SIGTERM came too late"


class HoldingWebhook:
    """A validating admission webhook (HTTPS, its own CA) that holds every real UPDATE of a Queue until
    `release()` -- dry-runs pass at once -- so a write is surely in flight when the test wants it to be."""

    def __init__(self, cluster: KaiCluster) -> None:
        pki = generate(cluster.tmp / "webhook-pki")
        self.cluster, self.ca = cluster, pki.ca_cert
        self.held, self.released, self.seen = threading.Event(), threading.Event(), threading.Event()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                request = review["request"]
                hook.seen.set()
                if not request.get("dryRun") and request["name"] != "admission-probe":
                    hook.held.set()
                    hook.released.wait(20)
                body = json.dumps(
                    {
                        "apiVersion": "admission.k8s.io/v1",
                        "kind": "AdmissionReview",
                        "response": {"uid": request["uid"], "allowed": True},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pki.serving_cert, pki.serving_key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HoldingWebhook:
        self.thread.start()
        port = self.server.server_address[1]
        kubernetes.client.AdmissionregistrationV1Api(self.cluster.client).create_validating_webhook_configuration(
            {
                "metadata": {"name": "hold-queue-writes"},
                "webhooks": [
                    {
                        "name": "hold.queues.kai-gitops.test",
                        "sideEffects": "None",
                        "admissionReviewVersions": ["v1"],
                        "failurePolicy": "Fail",
                        "timeoutSeconds": 25,
                        "clientConfig": {
                            "url": f"https://127.0.0.1:{port}/validate",
                            "caBundle": base64.b64encode(self.ca.read_bytes()).decode(),
                        },
                        "rules": [
                            {
                                "apiGroups": ["scheduling.run.ai"],
                                "apiVersions": ["v2"],
                                "operations": ["UPDATE"],
                                "resources": ["queues"],
                            }
                        ],
                    }
                ],
            }
        )
        self._wait_until(in_force=True)
        return self

    def release(self) -> None:
        self.released.set()

    def __exit__(self, *exc: object) -> None:
        self.release()
        kubernetes.client.AdmissionregistrationV1Api(self.cluster.client).delete_validating_webhook_configuration(
            "hold-queue-writes"
        )
        self._wait_until(in_force=False)
        self.server.shutdown()
        self.server.server_close()

    def _wait_until(self, *, in_force: bool) -> None:
        """The server loads webhook configurations through an informer: probe with dry-run updates."""
        probe = {"metadata": {"labels": {"probe": str(time.monotonic_ns())}}}
        deadline = time.monotonic() + 30
        while True:
            self.seen.clear()
            self.cluster.custom.patch_cluster_custom_object(
                "scheduling.run.ai", "v2", "queues", CHILD, probe, dry_run="All"
            )
            if self.seen.is_set() == in_force:
                return
            assert time.monotonic() < deadline, "the webhook configuration did not come into (or out of) force"
            time.sleep(0.1)


def test_sigterm_during_a_queue_write_audits_it_as_uncertain_and_the_same_plan_settles_it(cluster: KaiCluster) -> None:
    plan, audit = cluster.tmp / "plan.json", cluster.tmp / "audit.jsonl"
    assert cluster.run("reconcile", "--plan-out", plan).code == 2
    with HoldingWebhook(cluster) as webhook:
        args = cluster.args("reconcile", "--plan", plan, "--apply", "--audit-log", audit)
        with running(args) as proc:
            assert webhook.held.wait(60), proc.communicate()  # the parent queue's PATCH is in the API server
            assert_interrupted(proc, cluster)
    results = [(a["object"]["name"], a["result"], a["error"]) for a in audit_lines(audit)]
    assert results == [
        (PARENT, "started", None),
        (PARENT, "failed", "KeyboardInterrupt: the write may or may not have been applied"),
        (CHILD, "not-attempted", "the run was interrupted"),
    ], results
    # Whether the held write landed is up to the API server; the same plan applied again settles it.
    again = cluster.run("reconcile", "--plan", plan, "--apply", "--audit-log", audit)
    assert again.code in (0, 2) and "Apply complete" in again.out, again
    settled = {a["object"]["name"]: a["result"] for a in audit_lines(audit)[len(results) :] if a["result"] != "started"}
    assert settled[CHILD] == "applied" and settled[PARENT] in ("applied", "already-applied"), settled
    for name in (PARENT, CHILD):
        assert cluster.triples(name)["cpu"]["quota"] == -1
