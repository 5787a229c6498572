"""No credential reaches a Git host: planted in the live state, or in findings directly, none is in any request.

Two layers are checked. The pipeline test plants credential shapes where operators really put them (Helm
release values, Queue annotations) and where a rule quotes live text verbatim (an NVCFBackend feature-gate
override list, quoted by NVCA-G-013), runs the real `diff` and reports to both stand-ins. The second
test hands findings that carry the secrets in every text field straight to the drift-issue code, so the
last gate (the host layer's scrub) is what is tested.
"""

from __future__ import annotations

import json
import string
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from reconciler.core.refs import Location
from reconciler.core.resources import queue_ref
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from reconciler.publish.drift_issue import DriftContext, report_drift
from reconciler.report.report import ClusterReport, GitInfo
from tests.support.githost.github import GitHubStandIn
from tests.support.githost.gitlab import GitLabStandIn
from tests.support.githost_shared import TOKEN, github_host, gitlab_host
from tests.support.helpers import DEMO_SNAPSHOTS, load_demo_builder, release_secret, snapshot_file

_ALNUM = string.ascii_letters + string.digits
_word = st.text(_ALNUM, min_size=14, max_size=30).map(lambda s: "Zq9" + s)  # distinctive, never ordinary text


def _blob(core: str) -> str:
    return (core * 3)[:44] + "Aa1"


# (planted text, the part that must never be seen)
credential = st.one_of(
    _word.map(lambda w: (f"https://deploy:{w}@registry.example.com/v2", w)),
    _word.map(lambda w: (f"--token={w}", w)),
    _word.map(lambda w: (f"--client-secret {w}", w)),
    _word.map(lambda w: (_blob(w), _blob(w))),
    _word.map(lambda w: ("ghp_" + _blob(w)[:36], _blob(w)[:36])),
    _word.map(lambda w: (f"-----BEGIN RSA PRIVATE KEY-----\nMIIE{w}\n-----END RSA PRIVATE KEY-----", f"MIIE{w}")),
)


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo-secrets") / "repo"
    load_demo_builder().build_repo(target)
    return target


class _Servers:
    """Fresh stand-ins for each example (an issue left by the previous one would make this run a no-op)."""

    def __enter__(self) -> tuple[GitHubStandIn, GitLabStandIn]:
        self.github = GitHubStandIn(token=TOKEN).start()
        self.gitlab = GitLabStandIn("acme/gitops", prefix="/gitlab", token=TOKEN).start()
        return self.github, self.gitlab

    def __exit__(self, *exc: object) -> None:
        for server in (self.github, self.gitlab):
            server.stop()
            server.assert_clean()


def _planted_snapshot(directory: Path, secrets: list[str]) -> Path:
    items = YAML(typ="safe", pure=True).load((DEMO_SNAPSHOTS / "prod-addon.yaml").read_text())["items"]
    for item in items:
        meta = item["metadata"]
        if item["kind"] == "Queue":
            meta.setdefault("annotations", {}).update({"team/contact": secrets[0], "team/notes": secrets[1]})
        if item["kind"] == "NVCFBackend":
            item["spec"].setdefault("overrides", {}).setdefault("featureGate", {})["values"] = [
                "KAIScheduler",
                secrets[2],
                secrets[3],
            ]
    items = [i for i in items if not (i["kind"] == "Secret" and i["metadata"]["name"].endswith("kai.v4"))]
    items.append(
        release_secret(
            name="kai",
            namespace="runai",
            revision=4,
            version="v0.14.0",
            config={
                "global": {"registry": {"password": secrets[0], "url": secrets[1]}},
                "scheduler": {"args": ["--token", secrets[2], secrets[3]], "note": secrets[4]},
            },
        )
    )
    return snapshot_file(directory, items, name="planted")


def _sent(server: Any) -> str:
    text = "\n".join(body.decode("utf-8", "replace") for body in server.bodies())
    decoded = json.loads(json.dumps(text))
    return text + "\n" + unquote(decoded) + "\n" + "\n".join(unquote(r.path + str(r.query)) for r in server.requests)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(credential, min_size=5, max_size=5))
def test_planted_live_secrets_never_reach_a_host(
    demo_repo: Path, tmp_path_factory: Any, planted: list[tuple[str, str]]
) -> None:
    from reconciler.app.pipeline import run_diff
    from reconciler.app.settings import GitSettings, RunSettings
    from reconciler.sources.snapshot import read_snapshot

    snapshot = _planted_snapshot(tmp_path_factory.mktemp("snap"), [text for text, _ in planted])
    report = run_diff(RunSettings(GitSettings(str(demo_repo)), "prod-addon"), lambda _c: read_snapshot(str(snapshot)))
    cluster = report.clusters[0]
    quoted = [f for f in cluster.findings if f.rule_id == "NVCA-G-013"]
    assert quoted, "the feature-gate override is quoted by NVCA-G-013: the path a leak would take is live"
    with _Servers() as (github, gitlab):
        for server, host in ((github, github_host(github)), (gitlab, gitlab_host(gitlab))):
            report_drift(host, cluster, DriftContext(("kai-gitops",)))
            sent = _sent(server)
            assert "&lt;redacted&gt;" in sent or "<redacted>" in sent  # the leak path was exercised
            for _, core in planted:
                assert core not in sent


@settings(max_examples=8, deadline=None)
@given(credential, credential)
def test_secrets_in_findings_are_scrubbed_at_the_host_gate(first: tuple[str, str], second: tuple[str, str]) -> None:
    (a, a_core), (b, b_core) = first, second
    finding = Finding(
        "KAI-Q-900",
        Kind.DRIFT,
        Severity.ERROR,
        f"queue value {a} differs from {b}",
        "leaky",
        subject=queue_ref("team-a"),
        location=Location("queues.yaml", 4, 3, ("spec",)),
        desired=a,
        live=b,
        title=f"title {b}",
        fix=Fix(Action.UPDATE, f"set it to {a}", command=f"kubectl patch queue team-a -p '{b}'"),
        changes=(DriftedField(("spec", "note"), a, b, "spec.note"),),
    )
    cluster = ClusterReport("leaky", GitInfo("repo", "HEAD", "ab" * 20), f"snapshot {a}", findings=[finding])
    with _Servers() as (github, gitlab):
        for server, host in ((github, github_host(github)), (gitlab, gitlab_host(gitlab))):
            context = DriftContext(("kai-gitops",), plan_lines=[f"  ~ update {a}", f"  note: {b}"])
            report_drift(host, cluster, context)
            report_drift(host, replace(cluster, findings=[]), context)  # the close comment and clean body too
            sent = _sent(server)
            assert "&lt;redacted&gt;" in sent or "<redacted>" in sent  # the leak path was exercised
            assert a_core not in sent and b_core not in sent
