"""`kai-gitops snapshot` writes a file meant to be shared (a CI artifact, a bug report): kai-config's and the
SchedulingShards' specs, kept whole for the differ, and every label and annotation are written redacted (issue 26).

A URL's password (an external Prometheus), values under dashed or camel-cased credential names, a token-shaped
node label: none reaches the file; everything else does, unchanged (the toleration's `key` included, issue 31).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from reconciler.sources.snapshot import read_snapshot
from reconciler.sources.snapshot_writer import snapshot_command
from tests.support.cluster_source import FAST, lab_items, serve, write_kubeconfig
from tests.support.kubeserver import KubeTestServer

PROM_PASSWORD = "Zq9PromPassw0rdInUrl"
API_KEY = "Zq9ApiKeyDashed00001"
X_API_KEY = "Zq9XApiKeyDashed0002"
CAMEL = "Zq9ClientSecretCamel3"
SHARD_SECRET = "Zq9ShardApiKey000004"
LABEL_TOKEN = "ghp_Zq9NodeLabelToken00000000000000000005"
ANNOTATION = "glpat-Zq9NodeAnnotation000006"
SECRETS = (PROM_PASSWORD, API_KEY, X_API_KEY, CAMEL, SHARD_SECRET, LABEL_TOKEN, ANNOTATION)
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def planted_items() -> list[dict[str, Any]]:
    items = lab_items()
    for item in items:
        kind, spec = item["kind"], item.get("spec")
        if kind == "Config":
            spec.setdefault("prometheus", {})["externalPrometheusUrl"] = (
                f"https://prom:{PROM_PASSWORD}@prom.example:9090"
            )
            spec["global"]["tolerations"] = [TOLERATION]
            spec["global"]["extraEnv"] = {"api-key": API_KEY, "x-api-key": X_API_KEY, "clientSecret": CAMEL}
        elif kind == "SchedulingShard":
            spec["args"] = {"apiKey": SHARD_SECRET}
        elif kind == "Node" and item["metadata"]["name"] == "lab-gpu-1":
            item["metadata"]["labels"]["ci.example.com/runner"] = LABEL_TOKEN
            item["metadata"].setdefault("annotations", {})["ci.example.com/registration"] = ANNOTATION
    return items


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("snap")
    with KubeTestServer() as server:
        serve(server, planted_items())
        kubeconfig = str(write_kubeconfig(tmp / "kc", {"lab": server.url}, current="lab"))
        for name in ("s.yaml", "s.json"):
            snapshot_command(str(tmp / name), kubeconfig, None, settings=FAST)
    return {"yaml": tmp / "s.yaml", "json": tmp / "s.json"}


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_no_credential_of_kai_config_shards_labels_or_annotations_reaches_the_file(
    snapshots: dict[str, Path], fmt: str
) -> None:
    text = snapshots[fmt].read_text()
    assert [s for s in SECRETS if s in text] == []
    assert "https://<redacted>@prom.example:9090" in text  # the endpoint stays, its credential does not


def test_everything_else_of_those_objects_is_written_as_the_cluster_holds_it(snapshots: dict[str, Path]) -> None:
    items = {(i["kind"], i["metadata"]["name"]): i for i in orjson.loads(snapshots["json"].read_bytes())["items"]}
    [served_config] = [i for i in planted_items() if i["kind"] == "Config"]
    config = items["Config", "kai-config"]["spec"]
    assert config["global"]["tolerations"] == [TOLERATION]
    assert config["global"]["extraEnv"] == {
        "api-key": "<redacted>",
        "x-api-key": "<redacted>",
        "clientSecret": "<redacted>",
    }
    unplanted = {k: v for k, v in served_config["spec"].items() if k not in ("global", "prometheus")}
    assert {k: config[k] for k in unplanted} == unplanted
    assert items["SchedulingShard", "default"]["spec"]["args"] == {"apiKey": "<redacted>"}
    labels = items["Node", "lab-gpu-1"]["metadata"]["labels"]
    assert labels["ci.example.com/runner"] == "<redacted>" and labels["nvidia.com/gpu.present"] == "true"


def test_the_snapshot_reads_back_with_the_credentials_masked(snapshots: dict[str, Path]) -> None:
    live = read_snapshot(str(snapshots["yaml"]))
    assert live.kai_config is not None
    assert live.kai_config.spec["global"]["tolerations"] == [TOLERATION]
    assert not any(s in json.dumps(live.kai_config.spec) for s in SECRETS)


# -- read back: a masked credential is no drift when Git's value, redacted, is what the file shows -------------

PROM_VALUES = f"prometheus:\n  enabled: true\n  externalPrometheusUrl: https://prom:{PROM_PASSWORD}@prom.example:9090\n"


def test_a_credential_masked_in_a_snapshot_is_no_drift_but_a_live_one_is(tmp_path: Path) -> None:
    from reconciler.checks.differ import diff
    from reconciler.sources.snapshot_writer import shareable
    from tests.support.helpers import (
        desired_for,
        kai_crds,
        live_state,
        obj,
        release_secret,
        snapshot_file,
        standalone_config,
    )

    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": PROM_VALUES}
    )
    spec = desired.kai_config.spec()
    assert PROM_PASSWORD in spec["prometheus"]["externalPrometheusUrl"]
    read = {"apiVersion": "kai-gitops/v1", "kind": "KaiConfigRead", "metadata": {"name": "kai-config"}}
    items = [
        shareable(i)
        for i in (
            *kai_crds(),
            release_secret(version="v0.17.0"),
            read,
            obj("kai.scheduler/v1", "Config", "kai-config", spec=spec),
        )
    ]
    snapshot = read_snapshot(str(snapshot_file(tmp_path, items)))
    assert snapshot.kai_config is not None and PROM_PASSWORD not in json.dumps(snapshot.kai_config.spec)
    assert [f for f in diff(desired, snapshot) if f.rule_id == "KAI-D-005"] == []
    # a cluster that holds the masked text itself (someone applied a shared snapshot) has drifted
    [drift] = [f for f in diff(desired, live_state(items)) if f.rule_id == "KAI-D-005"]
    assert "prometheus.externalPrometheusUrl" in drift.message and PROM_PASSWORD not in drift.message


def test_a_shard_argument_masked_in_a_snapshot_is_no_drift(tmp_path: Path) -> None:
    from reconciler.checks.differ import diff
    from reconciler.sources.snapshot_writer import shareable
    from tests.support.helpers import (
        desired_for,
        kai_crds,
        live_state,
        obj,
        release_secret,
        snapshot_file,
        standalone_config,
    )

    values = f"scheduler:\n  plugins:\n    external:\n      arguments:\n        apiKey: {SHARD_SECRET}\n"
    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": values}
    )
    assert desired.shard.spec["plugins"]["external"]["arguments"] == {"apiKey": SHARD_SECRET}
    items = [
        shareable(i)
        for i in (
            *kai_crds(),
            release_secret(version="v0.17.0"),
            obj("kai.scheduler/v1", "SchedulingShard", "default", spec=desired.shard.spec),
        )
    ]
    snapshot = read_snapshot(str(snapshot_file(tmp_path, items)))
    assert SHARD_SECRET not in json.dumps(snapshot.shard)
    assert [f.rule_id for f in diff(desired, snapshot) if f.rule_id == "KAI-D-003"] == []
    assert [f.rule_id for f in diff(desired, live_state(items)) if f.rule_id == "KAI-D-003"] == ["KAI-D-003"]
