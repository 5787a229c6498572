"""Credentials planted in cluster free text on the real kube-apiserver -- an Event message, an NVCFBackend's
spec (`ngcAuth.password`) and annotations, a Queue annotation, NVCA's /healthz errors behind the real service
proxy -- reach neither `doctor` (text and JSON, logs included) nor the `kai-gitops snapshot` file, which
still names the objects they came from."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.demo_cluster import nvca_agent, populate
from tests.support.envtest import EnvTest
from tests.support.real_connect import kai_gitops
from tests.support.redaction_cluster_free_text import BLOB, HEALTHZ_TOKEN, LAST_APPLIED, SECRETS, planted_items


def test_cluster_free_text_is_masked_in_doctor_and_the_snapshot(envtest: EnvTest, tmp_path: Path) -> None:
    items = planted_items()
    populate(envtest, items)
    [healthz] = [i for i in items if i["kind"] == "NVCAHealthz"]
    assert envtest.kubeconfig is not None
    live = ["--kubeconfig", str(envtest.kubeconfig)]
    with nvca_agent(envtest, lambda: (healthz["httpStatus"], healthz["body"])) as agent:
        text = kai_gitops(["doctor", *live, "--log-format", "json"], {}, tmp_path)
        as_json = kai_gitops(["doctor", *live, "-o", "json", "--log-format", "text"], {}, tmp_path)
        snapshot = tmp_path / "snap.yaml"
        made = kai_gitops(["snapshot", "-o", str(snapshot), *live], {"KAI_GITOPS_LOG_FORMAT": "json"}, tmp_path)
    assert text.returncode == as_json.returncode == 2 and made.returncode == 0, (text.stderr, made.stderr)
    assert "didn't have free GPUs" in text.stdout and "https://<redacted>@registry.example.com" in text.stdout
    if agent is not None:  # NVCA's own errors were read through the proxy, masked
        assert "NGC_API_KEY=<redacted>" in json.dumps(json.loads(as_json.stdout)["healthz"])
    written = snapshot.read_text()
    assert "NVCFBackend" in written and "ngcAuth" in written and LAST_APPLIED not in written
    everything = "\n".join(
        [text.stdout, text.stderr, as_json.stdout, as_json.stderr, made.stdout, made.stderr, written]
    )
    for secret in SECRETS:
        assert secret not in everything, secret
    assert BLOB[:20] not in everything and HEALTHZ_TOKEN not in everything
