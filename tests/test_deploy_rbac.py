"""deploy/rbac.yaml grants every request the cluster reader makes, and no write.

A read the ServiceAccount may not make is a 403, and a 403 ends the run: so this test reads the demo
cluster through the test server and checks each request against the shipped RBAC.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from reconciler.sources.cluster import cluster_reader
from reconciler.sources.cluster.client import ReadSettings
from tests.helpers import ROOT, load_demo_builder
from tests.support.kubeserver import KubeTestServer
from tests.test_cluster_source import serve, write_kubeconfig

_CORE = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?P<sub>/.*)?$")
_GROUP = re.compile(r"^/apis/(?P<group>[^/]+)/[^/]+/(?:namespaces/(?P<ns>[^/]+)/)?(?P<res>[^/]+)"
                    r"(?:/(?P<name>[^/]+))?$")


def rbac_rules(file: str = "deploy/rbac.yaml") -> list[tuple[str | None, dict[str, Any]]]:
    """(namespace or None for cluster-wide, rule) for every rule bound to the kai-gitops ServiceAccount."""
    docs = [d for d in yaml.safe_load_all((ROOT / file).read_text()) if d]
    roles = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs
             if d["kind"] in ("ClusterRole", "Role")}
    rules = []
    for binding in (d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert any(s["name"] == "kai-gitops" for s in binding["subjects"])
        ns = binding["metadata"].get("namespace")
        role = roles[(binding["roleRef"]["kind"], ns if binding["roleRef"]["kind"] == "Role" else None,
                      binding["roleRef"]["name"])]
        rules += [(ns, rule) for rule in role["rules"]]
    return rules


Attributes = tuple[str, str, str | None, str | None, str]
_DISCOVERY = re.compile(r"^/api(/v1)?$|^/apis(/[^/]+){0,2}$")


_VERBS = {"POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}


def attributes(path: str, method: str = "GET") -> Attributes | None:
    """(apiGroup, resource, namespace, name, verb) of a request; None for discovery, which any user may read."""
    if _DISCOVERY.match(path):
        return None
    core = _CORE.match(path)
    if core and path.startswith("/api/v1/"):
        res, name, sub = core["res"], core["name"], core["sub"]
        if sub and sub.startswith("/proxy"):
            return "", f"{res}/proxy", core["ns"], name, "get"
        return "", res, core["ns"], name, _verb(method, name)
    group = _GROUP.match(path)
    assert group, path
    return group["group"], group["res"], group["ns"], group["name"], _verb(method, group["name"])


def _verb(method: str, name: str | None) -> str:
    if method == "GET":
        return "get" if name else "list"
    return _VERBS[method]


def allowed(rules: list[tuple[str | None, dict[str, Any]]], attrs: Attributes) -> bool:
    return any(grants(scope, rule, attrs) for scope, rule in rules)


def grants(scope: str | None, rule: dict[str, Any], attrs: Attributes) -> bool:
    group, resource, namespace, name, verb = attrs
    if scope is not None and scope != namespace:
        return False
    return group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"] and (
        "resourceNames" not in rule or name in rule["resourceNames"])


def test_every_read_of_a_diff_is_granted_and_nothing_writes(tmp_path: Path) -> None:
    demo = load_demo_builder()
    rules = rbac_rules()
    writes = {v for _, r in rules for v in r["verbs"]} - {"get", "list", "watch"}
    assert writes == set()
    with KubeTestServer() as server:
        serve(server, demo.prod_addon_snapshot())
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"prod": server.url})
        cluster_reader(str(kubeconfig), None, settings=ReadSettings(attempts=1))("prod")
        requests = list(server.requests)
    assert len(requests) > 10
    denied = []
    for request in requests:
        attrs = attributes(request.path)
        if attrs is not None and not allowed(rules, attrs):
            denied.append((request.method, request.path, attrs))
    assert denied == []


def test_the_fixer_role_grants_every_request_of_an_apply_and_nothing_it_does_not_use(
        tmp_path: Path, monkeypatch: Any) -> None:
    from tests.reconcile_support import demo_cluster

    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    reader, fixer = rbac_rules(), rbac_rules("deploy/rbac-fixer.yaml")
    verbs = {v for _, r in fixer for v in r["verbs"]}
    assert verbs == {"get", "create", "patch", "update"}   # no delete, no list/watch beyond the reader's
    assert not {res for _, r in fixer for res in r["resources"]} & {"secrets", "pods", "configmaps"}
    items = [i for i in load_demo_builder().prod_addon_snapshot()   # a missing queue: the apply creates it
             if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")]
    for demo in demo_cluster(tmp_path, items):
        _, out, err = demo.reconcile("--apply")
        assert "Apply complete: 3 applied" in out, out + err
        requests = [(r.method, r.path) for r in demo.server.requests]
    denied = [(m, p) for m, p in requests if (a := attributes(p, m)) is not None and not allowed(reader + fixer, a)]
    assert denied == []
    used = [attributes(p, m) for m, p in requests]
    unused = [(scope, rule, verb) for scope, rule in fixer for verb in rule["verbs"]
              if not any(a is not None and a[4] == verb and grants(scope, rule, a) for a in used)]
    assert unused == []
    # the reader alone would refuse every write of the apply
    writes = [attributes(p, m) for m, p in requests if m != "GET"]
    assert writes and all(a is not None and not allowed(reader, a) for a in writes)
