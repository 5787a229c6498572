"""A kubeconfig `server:` with user:password (https://u:p@host) never shows: not in the saved plan, the
text or JSON output, the audit log or an error. The cluster identity is the URL without its userinfo, so
the identity check still binds a plan to its endpoint (and survives a rotated password)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from reconciler.core.redact import url_without_userinfo
from reconciler.plans.plan import ClusterIdentity
from reconciler.plans.saved import plan_from_dict
from tests.support.kubeserver.__main__ import write_kubeconfig
from tests.support.reconcile_support import Demo, demo_cluster

SECRET = "hunter2-s3cret"


@pytest.fixture(autouse=True)
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    for cluster in demo_cluster(tmp_path):
        with_password = cluster.server.url.replace("://", f"://admin:{SECRET}@", 1)
        write_kubeconfig(cluster.kubeconfig, "prod", with_password)
        yield cluster


def everything(demo: Demo, *texts: str) -> str:
    return "\n".join([*texts, *(p.read_text() for p in demo.tmp.glob("*.json*"))])


def test_a_password_in_the_server_url_is_in_no_output_file_or_error(demo: Demo) -> None:
    plan, audit = demo.tmp / "plan.json", demo.tmp / "audit.jsonl"
    _code, text, err1 = demo.reconcile("--plan-out", plan)
    _code, as_json, err2 = demo.reconcile("-o", "json")
    saved = json.loads(plan.read_text())
    assert saved["clusterIdentity"]["server"] == demo.server.url  # the endpoint, without its userinfo
    assert f"for {demo.server.url} (kube-system" in text

    code, applied, err3 = demo.reconcile("--plan", plan, "--apply", "--audit-log", audit)
    assert code == 2, applied + err3  # applied (the identity check passed); the operator's items remain
    assert "Apply complete: 3 applied" in applied
    assert {json.loads(line)["server"] for line in audit.read_text().splitlines()} == {demo.server.url}

    # a plan from another cluster (say, saved by an older kai-gitops with the password still in it): the
    # refusal names both endpoints, neither with a password
    loaded = plan_from_dict(saved, str(plan))
    other = replace(loaded, identity=ClusterIdentity("https://other:pw-zzz@elsewhere:6443", "x"))
    (demo.tmp / "other.json").write_text(json.dumps(other.to_dict()))
    code, _out, refused = demo.reconcile("--plan", demo.tmp / "other.json", "--apply")
    assert code == 1 and "refusing it" in refused and "elsewhere:6443" in refused
    assert SECRET not in everything(demo, text, err1, as_json, err2, applied, err3, refused)
    assert "pw-zzz" not in refused


def test_a_plan_made_with_a_password_applies_through_the_same_endpoint_without_it(demo: Demo) -> None:
    # The password is a credential, not the endpoint: rotating it (or moving to a token) keeps the plan valid.
    plan = demo.tmp / "plan.json"
    demo.reconcile("--plan-out", plan)
    write_kubeconfig(demo.kubeconfig, "prod", demo.server.url)
    code, out, err = demo.reconcile("--plan", plan, "--apply")
    assert code == 2 and "Apply complete: 3 applied" in out, out + err


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@api.example:6443/prefix", "https://api.example:6443/prefix"),
        ("https://token@api.example", "https://api.example"),
        ("https://api.example:6443", "https://api.example:6443"),
        ("https://[::1]:6443", "https://[::1]:6443"),
        ("HTTP://u:p%40x@10.0.0.1/", "HTTP://10.0.0.1/"),
    ],
)
def test_url_without_userinfo(url: str, shown: str) -> None:
    assert url_without_userinfo(url) == shown
