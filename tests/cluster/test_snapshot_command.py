"""`kai-gitops snapshot`: what it writes, what it never writes, and that it never leaves half a file."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from reconciler.core.errors import UserError
from reconciler.model.helm import encode_release_secret
from reconciler.model.live import LiveState
from reconciler.sources.snapshot import read_snapshot
from reconciler.sources.snapshot_writer import SnapshotWriter, snapshot_command
from reconciler.yamlio.document import decode_text, load_documents
from tests.support.cluster_source import DEMO, FAST, lab_items, prod_items, read_state, run_cli, serve, write_kubeconfig
from tests.support.kubeserver import Fault, KubeTestServer

Obj = dict[str, Any]
SECRET_VALUE = "hunter2-s3cr3t-value"
OPAQUE_VALUE = "b3BhcXVlLXNlY3JldC1kYXRh"


@pytest.fixture
def prod(tmp_path: Path) -> Any:
    with KubeTestServer() as server:
        serve(server, prod_items())
        yield server, str(write_kubeconfig(tmp_path / "kc", {"prod": server.url}, current="prod"))


def comparable(live: LiveState) -> Obj:
    data = dataclasses.asdict(live)
    data.pop("source")
    data.pop("from_snapshot"), data.pop("captured_at")  # what a snapshot knows of itself, a cluster read not
    for pod in data["nvcf_pods"] + data["kai_pods"]:
        pod.pop("age_s")  # measured from "now", which moves between two reads
    return data


@pytest.mark.parametrize("suffix", ["yaml", "json", "JSON"])
@pytest.mark.parametrize("items", [prod_items, lab_items], ids=["prod", "lab"])
def test_snapshot_reads_back_as_the_same_live_state(tmp_path: Path, suffix: str, items: Any) -> None:
    with KubeTestServer() as server:
        serve(server, items())
        kubeconfig = str(write_kubeconfig(tmp_path / "kc", {"c": server.url}, current="c"))
        target = tmp_path / f"snap.{suffix}"
        before = datetime.now(UTC)
        result = snapshot_command(str(target), kubeconfig, None, settings=FAST)
        after = datetime.now(UTC)
        live = read_state(server)
    raw = target.read_bytes()
    assert raw.startswith(b"{") if suffix.lower() == "json" else raw.startswith(b"# kai-gitops snapshot of context c")
    snapshot = read_snapshot(str(target))
    assert comparable(snapshot) == comparable(live)
    # when the read began, for the audit log's cut-off (--k8s-audit-log): a write after it is not what it shows
    assert b"kai-gitops.io/taken-at" in raw and snapshot.from_snapshot
    assert snapshot.captured_at is not None and before <= snapshot.captured_at <= after
    assert result.counts["NVCAHealthz"] == 1 and result.counts["Pod"] >= 2
    assert f"{sum(result.counts.values())} objects to {target}" in result.describe()
    assert target.stat().st_mode & 0o077 == 0  # the snapshot describes a cluster: owner-only


def test_secrets_never_reach_the_snapshot(prod: Any, tmp_path: Path) -> None:
    server, kubeconfig = prod
    release = {
        "name": "kai-scheduler",
        "namespace": "kai-scheduler",
        "version": 3,
        "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "kai-scheduler", "version": "v0.16.7"}},
        "config": {"global": {"registry": "r.example.com", "password": SECRET_VALUE}},
        "manifest": f"# rendered with token {SECRET_VALUE}\n",
    }
    other = {
        **release,
        "name": "vault",
        "namespace": "vault",
        "version": 1,
        "chart": {"metadata": {"name": "vault", "version": "0.28.0"}},
        "config": {"unsealKey": SECRET_VALUE},
    }
    server.add_many(
        [
            encode_release_secret(release),
            encode_release_secret(other),
            DEMO._obj(
                "v1",
                "Secret",
                "app-creds",
                "nvcf-backend",
                type="Opaque",
                metadata={"labels": {"owner": "helm"}},
                data={"token": OPAQUE_VALUE},
            ),
        ]
    )
    for target in (tmp_path / "s.yaml", tmp_path / "s.json"):
        snapshot_command(str(target), kubeconfig, None, settings=FAST)
        text = target.read_text()
        assert SECRET_VALUE not in text and OPAQUE_VALUE not in text and "eyJhdXRocyI6e319" not in text
        assert "kind: Secret" not in text and '"kind":"Secret"' not in text
        assert "<redacted>" in text and "HelmReleaseSummary" in text
        assert "vault" not in text  # other charts' releases are not KAI's business
    live = read_snapshot(str(tmp_path / "s.json"))
    assert [(r.namespace, r.name, r.revision) for r in live.releases] == [
        ("kai-scheduler", "kai-scheduler", 3),
        ("runai", "kai", 4),
    ]
    assert live.releases[0].values["global"]["password"] == "<redacted>"


def test_undecodable_release_is_an_error_item_without_data(prod: Any, tmp_path: Path) -> None:
    server, kubeconfig = prod
    broken = encode_release_secret({"name": "kai-scheduler", "namespace": "kai-scheduler", "version": 9})
    broken["data"]["release"] = "bm90IGEgcmVsZWFzZQ=="  # "not a release"
    server.add(broken)
    target = tmp_path / "s.json"
    snapshot_command(str(target), kubeconfig, None, settings=FAST)
    [item] = [i for i in orjson.loads(target.read_bytes())["items"] if i["kind"] == "HelmReleaseError"]
    assert item["metadata"] == {"name": "sh.helm.release.v1.kai-scheduler.v9", "namespace": "kai-scheduler"}
    assert "not a Helm release" in item["message"] and "bm90" not in target.read_text()


def test_failed_read_leaves_no_file_and_keeps_the_old_one(prod: Any, tmp_path: Path) -> None:
    server, kubeconfig = prod
    server.inject_fault(Fault(r"^/api/v1/nodes$", status=503, times=-1))
    fresh, old = tmp_path / "fresh.yaml", tmp_path / "old.yaml"
    old.write_text("previous snapshot\n")
    for target in (fresh, old):
        with pytest.raises(UserError, match=r"reading nodes .*HTTP 503 .*after 5 attempts"):
            snapshot_command(str(target), kubeconfig, None, settings=FAST)
    assert not fresh.exists() and old.read_text() == "previous snapshot\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kc", "old.yaml"]  # no temp files left


def test_output_path_errors(prod: Any, tmp_path: Path) -> None:
    _, kubeconfig = prod
    with pytest.raises(UserError, match="is a directory"):
        snapshot_command(str(tmp_path), kubeconfig, None, settings=FAST)
    with pytest.raises(UserError, match="output directory does not exist"):
        snapshot_command(str(tmp_path / "nope" / "s.yaml"), kubeconfig, None, settings=FAST)


def test_yaml_strings_read_back_as_strings(tmp_path: Path) -> None:
    """Label values like `yes`, `0o17` or a timestamp must not come back as booleans, numbers or dates."""
    tricky = [
        "yes",
        "No",
        "on",
        "y",
        "N",
        "true",
        "null",
        "~",
        "",
        "0o17",
        "0x1F",
        "1e3",
        "1_000",
        ".5",
        "-1",
        "2026-10-01",
        "2026-10-01T08:00:00Z",
        "a: b",
        "- x",
        "#c",
        "trailing ",
        " leading",
        "tab\there",
        "multi\nline\n",
        "multi\nno newline",
        "ünïcode",
        "*alias",
        "&anchor",
        "!tag",
        "%x",
        "@x",
        "`x",
        "plain-word",
        "kai.scheduler/queue",
    ]
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {str(i): v for i, v in enumerate(tricky)}},
        "numbers": {"int": 3, "float": 0.5, "neg": -1, "big": 1e6, "bool": True, "none": None},
    }
    target = tmp_path / "t.yaml"
    with SnapshotWriter(str(target)) as writer:
        writer.add(obj)
        writer.commit()
    [doc] = load_documents(decode_text(target.read_bytes(), str(target)), str(target))
    assert doc.data["items"] == [obj]


def test_empty_snapshot_is_a_valid_list(tmp_path: Path) -> None:
    for name in ("e.yaml", "e.json"):
        with SnapshotWriter(str(tmp_path / name)) as writer:
            writer.commit()
        assert read_snapshot(str(tmp_path / name)).nodes_total == 0


def test_cli_snapshot_command(prod: Any, tmp_path: Path) -> None:
    from reconciler.cli import main

    if "snapshot" not in main.commands:  # type: ignore[attr-defined]
        pytest.skip("the `snapshot` click command is not wired into reconciler/cli.py yet")
    server, kubeconfig = prod
    target = tmp_path / "s.yaml"
    result = run_cli(["snapshot", "-o", str(target), "--kubeconfig", kubeconfig])
    assert result.exit_code == 0 and target.exists() and result.stdout == ""
    assert "objects to" in result.stderr
    server.inject_fault(Fault(r"^/api/v1/pods$", status=500, times=-1))
    failed = run_cli(["snapshot", "-o", str(tmp_path / "f.json"), "--kubeconfig", kubeconfig, "--context", "prod"])
    assert failed.exit_code == 1 and failed.stderr.count("\n") == 1 and not (tmp_path / "f.json").exists()


def test_undecodable_release_reaches_live_state(prod: Any) -> None:
    server, _ = prod
    broken = encode_release_secret({"name": "kai-scheduler", "namespace": "kai-scheduler", "version": 9})
    broken["data"]["release"] = "bm90IGEgcmVsZWFzZQ=="
    server.add(broken)
    live = read_state(server)
    assert live.release_errors == [
        "Secret/kai-scheduler/sh.helm.release.v1.kai-scheduler.v9: data.release is not a Helm release (Error)"
    ]


def test_snapshot_keeps_only_the_gates_of_the_cluster_dto(prod: Any, tmp_path: Path) -> None:
    server, kubeconfig = prod
    dto = (
        'clusterName: "prod"\noAuthClientId: "client-7f3a"\nicmsConfig:\n  tokenURL: "https://sso/x"\n'
        f'agent:\n  natsPassword: "{SECRET_VALUE}"\ncapabilities: ["SelfHosted", "KAIScheduler"]\n'
    )
    server.add(
        DEMO._obj("v1", "ConfigMap", "nvcfbackend-self-managed", "nvca-operator", data={"cluster-dto.yaml": dto})
    )
    target = tmp_path / "s.yaml"
    snapshot_command(str(target), kubeconfig, None, settings=FAST)
    text = target.read_text()
    assert SECRET_VALUE not in text and "client-7f3a" not in text and "https://sso/x" not in text
    assert read_snapshot(str(target)).dto_capabilities == ["SelfHosted", "KAIScheduler"]


def test_output_takes_fmt_and_path_like_every_other_o(prod: Any, tmp_path: Path) -> None:
    """-o FMT[=PATH] as for the reports: yaml or json, to stdout or a file; a bare PATH keeps working."""
    from tests.support.helpers import assert_one_line_error
    from tests.support.helpers import run_cli as cli

    server, kubeconfig = prod
    code, out, err = cli(["snapshot", "-o", "yaml", "--kubeconfig", kubeconfig])
    assert code == 0 and "objects to stdout" in err
    (tmp_path / "printed.yaml").write_text(out)
    assert out.startswith("# kai-gitops snapshot of context prod")
    assert read_snapshot(str(tmp_path / "printed.yaml")).nodes_total == read_state(server).nodes_total
    code, out, err = cli(["snapshot", "-o", "json", "--kubeconfig", kubeconfig])
    assert code == 0 and orjson.loads(out)["kind"] == "List"
    for value, starts in (
        (f"json={tmp_path / 'a.snapshot'}", b"{"),
        (f"yaml={tmp_path / 'b.json'}", b"# "),
        (str(tmp_path / "c.json"), b"{"),
        (str(tmp_path / "d.yaml"), b"# "),
    ):
        code, out, err = cli(["snapshot", "--output", value, "--kubeconfig", kubeconfig])
        assert code == 0 and out == "", err
        written = Path(value.partition("=")[2] or value)
        assert written.read_bytes().startswith(starts), value
        assert f"objects to {written}" in err
    code, out, err = cli(["snapshot", "--output-file", str(tmp_path / "e.yaml"), "--kubeconfig", kubeconfig])
    assert code == 0 and (tmp_path / "e.yaml").is_file()  # the option's first name
    assert_one_line_error(
        *cli(["snapshot", "-o", "json=", "--kubeconfig", kubeconfig]), "names no file", "-o json=PATH"
    )
    assert_one_line_error(
        *cli(["snapshot", "-o", "sarif=x.sarif", "--kubeconfig", kubeconfig]), "a snapshot is yaml or json, not sarif"
    )
    server.inject_fault(Fault(r"^/api/v1/pods$", status=500, times=-1))
    code, out, err = cli(["snapshot", "-o", "yaml", "--kubeconfig", kubeconfig], env={"KAI_GITOPS_KUBE_ATTEMPTS": "1"})
    assert code == 1 and out == ""  # never half a List on stdout


@pytest.mark.parametrize("name", ["snap.yaml", "snap.json"])
def test_snapshot_says_when_it_read_the_cluster(prod: Any, tmp_path: Path, name: str) -> None:
    """`check --live-snapshot` shows the data's age: the List carries the time the cluster was read."""
    from datetime import UTC, datetime, timedelta

    from reconciler.sources.snapshot import read_snapshot_queues

    before = datetime.now(UTC).replace(microsecond=0)
    snapshot_command(str(tmp_path / name), prod[1], None, settings=FAST)
    taken = read_snapshot_queues(str(tmp_path / name)).taken_at
    assert taken is not None and before <= taken <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize("name", ["snap.yaml", "snap.json"])
def test_snapshot_names_the_cluster_it_read(prod: Any, tmp_path: Path, name: str) -> None:
    """`check --live-snapshot` holds the snapshot to the cluster's clusterUID: the List carries the API server's
    identity, the kube-system namespace's UID, read as `reconcile` reads it to bind a plan."""
    from reconciler.sources.snapshot import read_snapshot_queues

    namespace = prod[0].get_object("v1", "Namespace", "kube-system")
    uid = namespace["metadata"]["uid"]
    assert uid
    snapshot_command(str(tmp_path / name), prod[1], None, settings=FAST)
    assert read_snapshot_queues(str(tmp_path / name)).cluster_uid == uid


def test_a_cluster_whose_identity_cannot_be_read_leaves_no_snapshot(prod: Any, tmp_path: Path) -> None:
    prod[0].inject_fault(Fault(r"^/api/v1/namespaces/kube-system$", status=403, times=-1))
    with pytest.raises(UserError, match="kube-system"):
        snapshot_command(str(tmp_path / "snap.yaml"), prod[1], None, settings=FAST)
    assert not (tmp_path / "snap.yaml").exists()
