"""Live state from snapshots: List files, Helm release Secrets, redaction, and per-kind summaries."""

from __future__ import annotations

import base64
import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from reconciler.core.errors import UserError
from reconciler.core.redact import REDACTED, is_secret_key, redact
from reconciler.model.helm import (
    RELEASE_SECRET_TYPE,
    decode_release_secret,
    latest_per_release,
    release_from_summary,
)
from reconciler.model.live import healthz_from_response
from reconciler.model.queues import Triple
from reconciler.sources.snapshot import read_snapshot
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    DEMO_SNAPSHOTS,
    crd,
    default_queues,
    healthz_item,
    kai_crds,
    live_state,
    make_repo,
    node,
    obj,
    pod,
    queue,
    release_payload,
    release_secret,
    run_cli,
    snapshot_file,
    standalone_config,
)

SECRET = "hunter2-s3cr3t-value-never-printed"


def secret_with_payload(payload: bytes, name: str = "sh.helm.release.v1.kai-scheduler.v9") -> dict[str, Any]:
    """A release Secret whose Helm payload is `payload` (already the inner bytes, before Helm's base64)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": RELEASE_SECRET_TYPE,
        "metadata": {
            "name": name,
            "namespace": "kai-scheduler",
            "labels": {"owner": "helm", "name": "kai-scheduler", "version": "9"},
        },
        "data": {"release": base64.b64encode(base64.b64encode(payload)).decode()},
    }


# -- snapshot files ----------------------------------------------------------------------------------------


def test_demo_prod_snapshot_is_read_completely() -> None:
    state = read_snapshot(str(DEMO_SNAPSHOTS / "prod-addon.yaml"))
    assert state.source == f"snapshot {DEMO_SNAPSHOTS / 'prod-addon.yaml'}"
    assert state.queue_kind_served is True
    assert "queues.scheduling.run.ai" in state.crds
    assert set(state.queues) == {"default-parent-queue", "default-queue"}
    assert state.queues["default-queue"].parent == "default-parent-queue"
    assert state.queues["default-parent-queue"].triple("cpu") == Triple(0.0, -1.0, 1.0)
    assert state.shard is not None and state.shard["placementStrategy"] == {"gpu": "binpack", "cpu": "binpack"}
    assert [(r.namespace, r.name, r.revision, r.status, r.chart_version) for r in state.releases] == [
        ("kai-scheduler", "kai-scheduler", 2, "deployed", "v0.16.7"),
        ("runai", "kai", 4, "deployed", "v0.14.0"),
    ]
    assert state.release_errors == []
    assert state.nodes_total == 4
    assert state.schedule_labels == {"gpu-node-2": "True"}
    assert sorted(p.name for p in state.nvcf_pods) == ["fn-llama-0", "fn-llama-1"]
    assert sorted(p.name for p in state.kai_pods) == ["binder-5c6b8", "kai-scheduler-default-7d9f5c6b8-x2k4q"]
    assert state.unschedulable == {
        ("nvcf-backend", "fn-llama-1"): "0/4 nodes are available: 4 node(s) didn't have free GPUs."
    }
    assert state.dto_capabilities is not None and "KAIScheduler" not in state.dto_capabilities
    assert len(state.backends) == 1 and state.backends[0].agent_status == "Unknown"
    assert state.healthz is not None and state.healthz.http_status == 503


def test_json_list_snapshot_equals_yaml_snapshot(tmp_path: Path) -> None:
    items = [
        *kai_crds(),
        *default_queues({"quota": 0, "limit": -1, "overQuotaWeight": 1}),
        node("n1", "true"),
        release_secret(config={"a": 1}),
    ]
    from_yaml = read_snapshot(str(snapshot_file(tmp_path, items, fmt="yaml")))
    from_json = read_snapshot(str(snapshot_file(tmp_path, items, fmt="json")))
    for state in (from_yaml, from_json):
        assert state.queue_kind_served
        assert state.queues["default-queue"].triple("gpu") == Triple(0.0, -1.0, 1.0)
        assert state.schedule_labels == {"n1": "true"}
        assert [r.values for r in state.releases] == [{"a": 1}]
    assert from_yaml.queues == from_json.queues


def test_single_object_snapshot_is_a_list_of_one(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(queue("default-queue", parent="default-parent-queue")))
    state = read_snapshot(str(path))
    assert list(state.queues) == ["default-queue"]
    assert state.queue_kind_served


def test_json_snapshot_with_leading_whitespace(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("\n  " + json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("a")]}))
    assert read_snapshot(str(path)).nodes_total == 1


def test_multi_document_yaml_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n"
    )
    assert read_snapshot(str(path)).nodes_total == 2


# -- malformed snapshots -----------------------------------------------------------------------------------------


def snapshot_error(tmp_path: Path, content: str | bytes, name: str = "snap.yaml") -> UserError:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(UserError) as info:
        read_snapshot(str(path))
    assert "\n" not in info.value.line()
    return info.value


def test_snapshot_not_a_list(tmp_path: Path) -> None:
    err = snapshot_error(tmp_path, "- 1\n- 2\n")
    assert err.where == f"{tmp_path / 'snap.yaml'}:1"
    assert "List" in err.message


def test_snapshot_item_without_kind_names_its_line(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n"
        "- apiVersion: v1\n  metadata: {name: b}\n"
    )
    err = snapshot_error(tmp_path, text)
    assert err.where == f"{tmp_path / 'snap.yaml'}:7:3"
    assert "item 1 has no kind/apiVersion" in err.message


def test_snapshot_json_item_without_kind(tmp_path: Path) -> None:
    err = snapshot_error(tmp_path, json.dumps({"kind": "List", "items": [{"apiVersion": "v1"}]}), "s.json")
    assert "item 0" in err.message
    assert str(tmp_path / "s.json") in (err.where or "")


def test_snapshot_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    err = snapshot_error(tmp_path, '{\n  "kind": "List",\n  "items": [1,,]\n}\n', "s.json")
    assert err.where == f"{tmp_path / 's.json'}:3:15"
    assert err.message.startswith("invalid JSON")


def test_snapshot_invalid_yaml(tmp_path: Path) -> None:
    err = snapshot_error(tmp_path, "kind: List\nitems: [\n")
    assert (err.where or "").startswith(f"{tmp_path / 'snap.yaml'}:")
    assert "invalid YAML" in err.message


def test_snapshot_items_not_a_list(tmp_path: Path) -> None:
    err = snapshot_error(tmp_path, "apiVersion: v1\nkind: List\nitems: {a: 1}\n")
    assert "`items` must be a list" in err.message


def test_snapshot_not_utf8(tmp_path: Path) -> None:
    err = snapshot_error(tmp_path, b"apiVersion: v1\nkind: List\n# \xff\n")
    assert err.where == f"{tmp_path / 'snap.yaml'}:3"


def test_missing_snapshot(tmp_path: Path) -> None:
    with pytest.raises(UserError) as info:
        read_snapshot(str(tmp_path / "nope.yaml"))
    assert info.value.where == str(tmp_path / "nope.yaml")
    assert "not found" in info.value.message


def test_empty_list_snapshot(tmp_path: Path) -> None:
    state = read_snapshot(str(snapshot_file(tmp_path, [])))
    assert state.queue_kind_served is False
    assert state.queues == {} and state.releases == []


# -- Helm release Secrets -----------------------------------------------------------------------------------------


def test_encode_decode_round_trip() -> None:
    secret = release_secret(revision=3, status="deployed", version="v0.16.7", config={"scheduler": {"x": 1}})
    assert secret["type"] == "helm.sh/release.v1"
    assert secret["metadata"]["name"] == "sh.helm.release.v1.kai-scheduler.v3"
    assert secret["metadata"]["labels"] == {
        "owner": "helm",
        "name": "kai-scheduler",
        "version": "3",
        "status": "deployed",
    }
    inner = base64.b64decode(base64.b64decode(secret["data"]["release"]))
    assert inner[:2] == b"\x1f\x8b"  # base64(gzip(JSON)) inside the Secret
    assert json.loads(gzip.decompress(inner))["config"] == {"scheduler": {"x": 1}}
    release = decode_release_secret(secret)
    assert (release.name, release.namespace, release.revision, release.status) == (
        "kai-scheduler",
        "kai-scheduler",
        3,
        "deployed",
    )
    assert (release.chart_name, release.chart_version, release.app_version) == ("kai-scheduler", "v0.16.7", "v0.16.7")
    assert release.values == {"scheduler": {"x": 1}}
    assert release_from_summary(release.to_summary()) == release


def test_non_gzipped_json_payload_is_accepted() -> None:
    payload = orjson.dumps(release_payload(revision=5, config={"k": "v"}))
    release = decode_release_secret(secret_with_payload(payload))
    assert (release.revision, release.values) == (5, {"k": "v"})


@pytest.mark.parametrize("payload", [b"not json at all", b"\x1f\x8b\x08\x00garbage", b"[1, 2]", b""])
def test_corrupt_payload_is_recorded_not_raised(payload: bytes) -> None:
    state = live_state([secret_with_payload(payload), release_secret(revision=1)])
    assert len(state.release_errors) == 1
    assert state.release_errors[0].startswith("Secret/kai-scheduler/sh.helm.release.v1.kai-scheduler.v9: ")
    assert [r.revision for r in state.releases] == [1]  # the good one still counts


def test_payload_that_is_not_base64_is_recorded() -> None:
    secret = secret_with_payload(b"{}")
    secret["data"]["release"] = "%%%not-base64%%%"
    assert len(live_state([secret]).release_errors) == 1
    del secret["data"]["release"]
    assert live_state([secret]).release_errors == [
        "Secret/kai-scheduler/sh.helm.release.v1.kai-scheduler.v9: no data.release"
    ]


@pytest.mark.parametrize(
    "payload",
    [{"name": "kai-scheduler", "version": "abc"}, {"name": "kai-scheduler", "version": 1, "chart": "kai-scheduler"}],
)
def test_wrongly_shaped_release_json_is_recorded_not_raised(payload: dict[str, Any]) -> None:
    state = live_state([secret_with_payload(orjson.dumps(payload))])
    assert len(state.release_errors) == 1


def test_latest_revision_prefers_deployed() -> None:
    state = live_state(
        [
            release_secret(revision=1, status="superseded"),
            release_secret(revision=2, status="deployed"),
            release_secret(revision=3, status="failed"),
            release_secret(revision=4, status="pending-upgrade"),
        ]
    )
    assert [(r.revision, r.status) for r in state.releases] == [(2, "deployed")]


def test_latest_revision_when_none_is_deployed() -> None:
    state = live_state(
        [
            release_secret(revision=1, status="superseded"),
            release_secret(revision=7, status="failed"),
            release_secret(revision=3, status="superseded"),
        ]
    )
    assert [(r.revision, r.status) for r in state.releases] == [(7, "failed")]


def test_latest_per_release_keeps_one_per_name_and_namespace() -> None:
    releases = [
        decode_release_secret(release_secret(name="kai-scheduler", namespace="kai-scheduler", revision=i))
        for i in (1, 2)
    ]
    releases.append(decode_release_secret(release_secret(name="kai-scheduler", namespace="other", revision=1)))
    assert [(r.namespace, r.revision) for r in latest_per_release(releases)] == [("kai-scheduler", 2), ("other", 1)]


def test_other_chart_releases_are_ignored_other_kai_releases_kept() -> None:
    state = live_state(
        [
            release_secret(name="ingress", namespace="ingress", chart="ingress-nginx"),
            release_secret(name="kai", namespace="runai", chart="kai-scheduler", version="v0.14.0"),
            release_secret(),
        ]
    )
    assert [(r.namespace, r.name) for r in state.releases] == [("kai-scheduler", "kai-scheduler"), ("runai", "kai")]


def test_release_values_are_redacted_by_key_name() -> None:
    config = {
        "global": {
            "registry": "nvcr.io",
            "registryPassword": SECRET,
            "imagePullSecrets": [{"name": "r"}],
            "auth": {"user": "u", "pass": SECRET},
        },
        "ngc": {"apiKey": SECRET, "serviceKey": SECRET, "token": SECRET, "clientSecret": SECRET},
        "scheduler": {"placementStrategy": "binpack"},
        "empty": {"password": ""},
    }
    release = decode_release_secret(release_secret(config=config))
    assert SECRET not in json.dumps(release.values)
    assert release.values["global"]["registry"] == "nvcr.io"
    assert release.values["global"]["registryPassword"] == REDACTED
    assert release.values["global"]["auth"] == {"user": REDACTED, "pass": REDACTED}
    assert release.values["ngc"] == {k: REDACTED for k in ("apiKey", "serviceKey", "token", "clientSecret")}
    assert release.values["scheduler"] == {"placementStrategy": "binpack"}
    assert release.values["empty"] == {"password": ""}


@pytest.mark.parametrize(
    "key, secret",
    [
        ("password", True),
        ("DB_PASSWORD", True),
        ("githubToken", True),
        ("secret", True),
        ("tlsCert", True),
        ("key", True),
        ("auth", True),
        ("placementStrategy", False),
        ("keyName", False),
        ("author", False),
        ("queue", False),
    ],
)
def test_is_secret_key(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


def test_redact_does_not_touch_lists_of_plain_values() -> None:
    assert redact({"a": [1, {"token": "x"}], "b": None}) == {"a": [1, {"token": REDACTED}], "b": None}


def test_release_summary_items_are_redacted_too() -> None:
    summary = {
        "apiVersion": "kai-gitops/v1",
        "kind": "HelmReleaseSummary",
        "metadata": {"name": "kai-scheduler", "namespace": "kai-scheduler"},
        "revision": 2,
        "status": "deployed",
        "chart": {"name": "kai-scheduler", "version": "v0.16.7"},
        "config": {"password": SECRET},
    }
    state = live_state([summary])
    assert state.releases[0].values == {"password": REDACTED}


def test_non_helm_secrets_are_dropped_entirely() -> None:
    other = obj(
        "v1",
        "Secret",
        "pull",
        "nvca-operator",
        type="kubernetes.io/dockerconfigjson",
        data={".dockerconfigjson": base64.b64encode(SECRET.encode()).decode()},
    )
    opaque = obj("v1", "Secret", "creds", "default", data={"password": SECRET})
    state = live_state([other, opaque])
    assert state.releases == [] and state.release_errors == []
    dump = repr(state)
    assert SECRET not in dump
    assert base64.b64encode(SECRET.encode()).decode() not in dump


# -- nodes, pods, events, health ------------------------------------------------------------------------------------


def test_schedule_label_tallies_keep_raw_values() -> None:
    state = live_state(
        [node("a", "true"), node("b", "True"), node("c", "yes"), node("d"), node("e", "false"), node("f", "")]
    )
    assert state.nodes_total == 6
    assert state.schedule_labels == {"a": "true", "b": "True", "c": "yes", "e": "false", "f": ""}


def test_nvcf_pods_by_label_and_by_namespace_label_in_any_order() -> None:
    now = datetime(2026, 10, 2, 8, 0, 0, tzinfo=UTC)
    items = [
        pod("labelled", "team-a", scheduler="default-scheduler", nvcf_label=True, created="2026-10-01T08:00:00Z"),
        pod("in-nvcf-ns", "nvcf-backend", queue_label="default-queue", phase="Pending", ready=False),
        pod("unrelated", "team-b"),
        pod("no-scheduler", "nvcf-backend", scheduler=None),
        obj(
            "v1",
            "Namespace",
            "nvcf-backend",
            metadata={"labels": {"nvca.nvcf.nvidia.io/workload-instance-type": "gpu"}},
        ),  # after its pods
        obj("v1", "Namespace", "team-b", metadata={"labels": {"x": "y"}}),
        pod("kai-scheduler-default-0", "kai-scheduler", scheduler="default-scheduler"),
    ]
    state = live_state(items, now=now)
    pods = {p.name: p for p in state.nvcf_pods}
    assert set(pods) == {"labelled", "in-nvcf-ns", "no-scheduler"}
    assert pods["labelled"].scheduler == "default-scheduler"
    assert pods["labelled"].labels_nvcf is True
    assert pods["labelled"].age_s == 86400.0
    assert pods["in-nvcf-ns"].queue_label == "default-queue"
    assert (pods["in-nvcf-ns"].phase, pods["in-nvcf-ns"].ready) == ("Pending", False)
    assert pods["in-nvcf-ns"].age_s is None
    assert pods["no-scheduler"].scheduler == "default-scheduler"
    assert [p.name for p in state.kai_pods] == ["kai-scheduler-default-0"]


def test_unschedulable_events() -> None:
    def event(name: str, reason: str, pod_name: str, message: str, api: str = "v1") -> dict[str, Any]:
        return obj(
            api,
            "Event",
            name,
            "nvcf-backend",
            reason=reason,
            message=message,
            involvedObject={"kind": "Pod", "namespace": "nvcf-backend", "name": pod_name},
        )

    state = live_state(
        [
            event("e1", "Unschedulable", "p1", "no GPUs"),
            event("e2", "FailedScheduling", "p2", "taint"),
            event("e3", "Scheduled", "p3", "ok"),
            event("e4", "Pulled", "p1", "pulled"),
        ]
    )
    assert state.unschedulable == {("nvcf-backend", "p1"): "no GPUs", ("nvcf-backend", "p2"): "taint"}


def test_events_k8s_io_v1_unschedulable_event() -> None:
    event = obj(
        "events.k8s.io/v1",
        "Event",
        "e1",
        "nvcf-backend",
        reason="FailedScheduling",
        note="0/4 nodes",
        regarding={"kind": "Pod", "namespace": "nvcf-backend", "name": "fn-0"},
    )
    assert live_state([event]).unschedulable == {("nvcf-backend", "fn-0"): "0/4 nodes"}


def test_nvca_healthz_item() -> None:
    body = {"Status": "unhealthy", "Components": {"kai-scheduler-queues": {"Status": "unhealthy", "Errors": ["boom"]}}}
    state = live_state([healthz_item(503, body)])
    assert state.healthz is not None
    assert (state.healthz.reachable, state.healthz.http_status, state.healthz.status) == (True, 503, "unhealthy")
    assert state.healthz.queue_component() == ("unhealthy", ["boom"])


def test_healthz_without_json_body() -> None:
    health = healthz_from_response(502, "Bad Gateway")
    assert health.status is None and health.components == {}
    assert "without a JSON body" in health.detail
    assert health.queue_component() == (None, [])


def test_nvcf_backend_and_dto() -> None:
    backend = obj(
        "nvcf.nvidia.io/v1",
        "NVCFBackend",
        "b",
        "nvca-operator",
        spec={"featureGate": {"values": ["A", "B"]}, "overrides": {"featureGate": {"values": "C, -D"}}},
        status={"featureGate": {"values": ["A"]}, "agentStatus": "healthy"},
    )
    dto = obj(
        "v1",
        "ConfigMap",
        "nvcfbackend-self-managed",
        "nvca-operator",
        data={"cluster-dto.yaml": 'capabilities: ["X","Y"]\n'},
    )
    other_cm = obj("v1", "ConfigMap", "nvcfbackend-self-managed", "elsewhere", data={"cluster-dto.yaml": "x: 1"})
    state = live_state([backend, dto, other_cm])
    b = state.backends[0]
    assert (b.spec_gates, b.override_gates, b.status_gates, b.agent_status) == (
        ["A", "B"],
        ["C", "-D"],
        ["A"],
        "healthy",
    )
    assert state.dto_capabilities == ["X", "Y"]


def test_broken_dto_is_missing_capabilities_not_a_crash() -> None:
    dto = obj("v1", "ConfigMap", "nvcfbackend-self-managed", "nvca-operator", data={"cluster-dto.yaml": "a: [\n"})
    state = live_state([dto])
    assert state.dto_capabilities is None


@pytest.mark.parametrize(
    "items, served",
    [
        ([], False),
        ([crd("queues.scheduling.run.ai")], True),
        ([crd("podgroups.scheduling.run.ai")], False),
        ([queue("anything")], True),
    ],
)
def test_queue_kind_served(items: list[dict[str, Any]], served: bool) -> None:
    assert live_state(items).queue_kind_served is served


def test_queue_without_resources_and_versions() -> None:
    q = queue("bare", no_resources=True, parent="p")
    q["metadata"]["resourceVersion"] = "42"
    state = live_state([q])
    assert state.queues["bare"].resources is None
    assert state.queues["bare"].triple("cpu") == Triple(0.0, 0.0, 0.0)


def test_unknown_kinds_and_versions_are_ignored() -> None:
    state = live_state([obj("scheduling.run.ai/v1", "Queue", "old"), obj("v1", "Service", "svc", "ns")])
    assert state.queues == {}


# -- redaction end to end ------------------------------------------------------------------------------------------


@pytest.fixture
def leaky_cluster(tmp_path: Path) -> tuple[Path, Path]:
    """Git wants the guide's values; the deployed release carries a password that differs from nothing in Git."""
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    from ruamel.yaml import YAML

    values = YAML(typ="safe", pure=True).load(CANONICAL_KAI_VALUES)
    values["global"] = {"registry": "registry.example.com", "registryPassword": SECRET, "auth": {"token": SECRET}}
    items = [
        *kai_crds(),
        *default_queues(),
        release_secret(version="v0.14.7", config=values),
        release_secret(name="kai", namespace="runai", version="v0.14.0", config={"password": SECRET}),
    ]
    return repo, snapshot_file(tmp_path, items)


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("command", ["diff", "doctor"])
def test_secret_value_never_reaches_any_output(leaky_cluster: tuple[Path, Path], fmt: str, command: str) -> None:
    repo, snapshot = leaky_cluster
    args = [command, "--repo", repo, "--snapshot", snapshot, "-o", fmt]
    code, stdout, stderr = run_cli(args)
    assert code in (0, 2), stderr
    assert SECRET not in stdout
    assert SECRET not in stderr
    if command == "diff":
        assert "KAI-D-004" in stdout  # the drift itself is reported, by path only
        assert "global" in stdout


def test_demo_snapshot_password_is_never_printed(tmp_path: Path) -> None:
    demo_secret = "hunter2-do-not-print"
    assert demo_secret not in (DEMO_SNAPSHOTS / "prod-addon.yaml").read_text()  # it is inside the gzip payload
    for fmt in ("json", "text"):
        code, stdout, stderr = run_cli(["doctor", "--snapshot", DEMO_SNAPSHOTS / "prod-addon.yaml", "-o", fmt])
        assert code in (0, 2), stderr
        assert demo_secret not in stdout + stderr


def test_redaction_keeps_references_to_secrets_readable() -> None:
    from reconciler.core.redact import REDACTED, redact

    values = {
        "existingSecretName": "kai-creds",
        "tokenSecretRef": "ref",
        "certFile": "/etc/tls.crt",
        "registryPassword": "hunter2",
        "auth": {"token": "abc", "user": "me"},
    }
    assert redact(values) == {
        "existingSecretName": "kai-creds",
        "tokenSecretRef": "ref",
        "certFile": "/etc/tls.crt",
        "registryPassword": REDACTED,
        "auth": {"token": REDACTED, "user": REDACTED},
    }
