"""deploy/'s RBAC grants every request each mode makes, and nothing more than that mode may do.

The test API server does not enforce RBAC, so each request it served is checked against the rules the
rendered overlay binds to the kai-gitops ServiceAccount. What the default (least-privilege) layout does
not grant, the server answers 403 here, as the real one would: the cluster-wide Helm release Secret
list. The reader must then fall back to namespace kai-scheduler and report KAI-R-016, not fail.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from reconciler.sources.cluster import cluster_reader
from reconciler.sources.cluster.client import ReadSettings
from reconciler.sources.snapshot import read_snapshot
from tests.support.cluster_source import FAST, run_cli, serve, write_kubeconfig
from tests.support.deploy_manifests import rendered
from tests.support.deploy_rbac import CLUSTER_WIDE_SECRETS, plant_reports
from tests.support.helpers import load_demo_builder
from tests.support.kubeserver import Fault, KubeTestServer, RequestRecord

Obj = dict[str, Any]
Rule = tuple[str | None, str, Obj]  # (namespace or None for cluster-wide, role name, rule)
Attributes = tuple[str, str, str | None, str | None, str]

_CORE = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?P<sub>/.*)?$")
_GROUP = re.compile(
    r"^/apis/(?P<group>[^/]+)/[^/]+/(?:namespaces/(?P<ns>[^/]+)/)?(?P<res>[^/]+)"
    r"(?:/(?P<name>[^/]+))?$"
)
_DISCOVERY = re.compile(r"^/api(/v1)?$|^/apis(/[^/]+){0,2}$")
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
READS = {"get", "list", "watch"}


def bound_rules(objects: list[Obj]) -> list[Rule]:
    """Every rule bound to the kai-gitops ServiceAccount by the rendered objects."""
    roles = {
        (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d
        for d in objects
        if d["kind"] in ("ClusterRole", "Role")
    }
    rules: list[Rule] = []
    for binding in (d for d in objects if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kai-gitops", "namespace": "kai-gitops"}]
        ns = binding["metadata"].get("namespace")
        ref = binding["roleRef"]
        role = roles[(ref["kind"], ns if ref["kind"] == "Role" else None, ref["name"])]
        rules += [(ns, ref["name"], rule) for rule in role["rules"]]
    return rules


def attributes(method: str, path: str) -> Attributes | None:
    """(apiGroup, resource, namespace, name, verb) of a request; None for discovery, which any user may read."""
    if _DISCOVERY.match(path):
        return None
    core = _CORE.match(path)
    if core and path.startswith("/api/v1/"):
        res, name, sub = core["res"], core["name"], core["sub"]
        if sub and sub.startswith("/proxy"):
            return "", f"{res}/proxy", core["ns"], name, "get"
        group, namespace = "", core["ns"]
    else:
        match = _GROUP.match(path)
        assert match, path
        group, res, namespace, name = match["group"], match["res"], match["ns"], match["name"]
    verb = _VERBS.get(method) or ("get" if name else "list")
    return group, res, namespace, name, verb


def allowed(rules: list[Rule], attrs: Attributes) -> bool:
    group, resource, namespace, name, verb = attrs
    for scope, _, rule in rules:
        if scope is not None and scope != namespace:
            continue
        if (
            group in rule["apiGroups"]
            and resource in rule["resources"]
            and verb in rule["verbs"]
            and ("resourceNames" not in rule or name in rule["resourceNames"])
        ):
            return True
    return False


def judge(requests: list[RequestRecord], rules: list[Rule]) -> tuple[list[RequestRecord], list[RequestRecord]]:
    """(served but not granted, answered 403 although granted): both must be empty for a faithful run."""
    served_denied, refused_granted = [], []
    for request in requests:
        attrs = attributes(request.method, request.path)
        if attrs is None:
            continue
        ok = allowed(rules, attrs)
        if request.status == 403 and ok:
            refused_granted.append(request)
        elif request.status != 403 and not ok:
            served_denied.append(request)
    return served_denied, refused_granted


@pytest.fixture
def demo_cluster(tmp_path: Path) -> Any:
    with KubeTestServer() as server:
        serve(server, load_demo_builder().prod_addon_snapshot())
        server.kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", {"prod": server.url}, current="prod"))
        yield server


def read(server: KubeTestServer) -> Any:
    return cluster_reader(server.kubeconfig, None, settings=ReadSettings(attempts=1))("prod")


def test_read_roles_write_nothing(tmp_path: Path) -> None:
    for overlay in ("report-only", "self-heal"):
        rules = bound_rules(rendered(tmp_path, overlay, ("cluster-wide-releases",)))
        reads = [r for r in rules if r[1].startswith("kai-gitops-read")]
        assert reads and {v for _, _, r in reads for v in r["verbs"]} <= READS


def test_healthz_proxy_is_granted_in_nvca_system_only(tmp_path: Path) -> None:
    """The reader proxies to one Service, nvca-system/nvca:8000: a cluster-wide grant would reach a
    Service of that name and port in every namespace."""
    rules = bound_rules(rendered(tmp_path, "report-only"))
    proxies = [(scope, r) for scope, _, r in rules if "services/proxy" in r["resources"]]
    assert proxies == [
        (
            "nvca-system",
            {"apiGroups": [""], "resources": ["services/proxy"], "resourceNames": ["nvca:8000"], "verbs": ["get"]},
        )
    ]


REPORT_RESOURCES = {
    ("wgpolicyk8s.io", "policyreports"),
    ("wgpolicyk8s.io", "clusterpolicyreports"),
    ("openreports.io", "reports"),
    ("openreports.io", "clusterreports"),
}


def test_report_only_writes_nothing_but_report_objects(tmp_path: Path) -> None:
    rules = bound_rules(rendered(tmp_path, "report-only", ("opa-sidecar", "cluster-wide-releases")))
    writes = {
        (g, res) for _, _, r in rules if set(r["verbs"]) - READS for g in r["apiGroups"] for res in r["resources"]
    }
    assert writes == REPORT_RESOURCES
    assert {name for _, name, r in rules if set(r["verbs"]) - READS} == {"kai-gitops-report"}


def test_fixer_role_grants_only_the_allowed_writes(tmp_path: Path) -> None:
    """The allowed writes (docs/reconcile.md): create/patch Queues, the node label, patch kai-config (that one
    name only) and SchedulingShards, plus the guard rails (Lease, Events); never delete, Secrets or Pods."""
    rules = bound_rules(rendered(tmp_path, "self-heal"))
    writes = {
        (scope, g, res, v)
        for scope, name, r in rules
        for g in r["apiGroups"]
        for res in r["resources"]
        for v in r["verbs"]
        if v not in READS and name != "kai-gitops-report"
    }
    assert writes == {
        (None, "scheduling.run.ai", "queues", "create"),
        (None, "scheduling.run.ai", "queues", "patch"),
        (None, "", "nodes", "patch"),
        ("default", "events.k8s.io", "events", "create"),
        (None, "kai.scheduler", "configs", "patch"),
        (None, "kai.scheduler", "schedulingshards", "patch"),
        ("kai-gitops", "coordination.k8s.io", "leases", "create"),
        ("kai-gitops", "coordination.k8s.io", "leases", "update"),
    }
    configs = [r for _, _, r in rules if "configs" in r["resources"] and "patch" in r["verbs"]]
    assert [r.get("resourceNames") for r in configs] == [["kai-config"]]
    secrets = [r for _, _, r in rules if "secrets" in r["resources"]]
    assert all(set(r["verbs"]) == {"list"} for r in secrets)


def report_role_names(objects: list[Obj]) -> list[list[str] | None]:
    """The resourceNames of every rule of the report role that may change or remove a report."""
    (role,) = [o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == "kai-gitops-report"]
    return [r.get("resourceNames") for r in role["rules"] if {"update", "delete"} & set(r["verbs"])]


@pytest.mark.parametrize("overlay", ["report-only", "self-heal"])
def test_the_report_role_changes_and_deletes_only_the_reports_named_for_its_cluster(
    tmp_path: Path, overlay: str
) -> None:
    """RBAC cannot select by label; the names are the tool's own (kai-gitops-<cluster>, deterministic)."""
    from reconciler.publish.policyreport.build import report_name

    objects = rendered(tmp_path, overlay)
    (settings,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "kai-gitops-settings"]
    ours = report_name(settings["data"]["cluster"])
    assert report_role_names(objects) == [[ours]] * 4
    rules = bound_rules(objects)
    for group, resource in REPORT_RESOURCES:
        namespaced = resource in ("policyreports", "reports")
        namespace = "retired" if namespaced else None
        assert allowed(rules, (group, resource, namespace, ours, "update"))
        # the cluster-scoped report is never stale (a clean run empties it): no delete at all
        assert allowed(rules, (group, resource, namespace, ours, "delete")) is namespaced
        assert not allowed(rules, (group, resource, namespace, "kyverno-pol-audit", "delete"))
        assert not allowed(rules, (group, resource, namespace, "kyverno-pol-audit", "update"))


def test_the_documented_patch_names_another_clusters_reports(tmp_path: Path) -> None:
    """rbac-report.yaml's comment tells a user checking another cluster how to patch the names: it must work."""
    import os

    import yaml

    from tests.support.deploy_manifests import DEPLOY
    from tests.support.kustomize import render

    comment = [
        line.removeprefix("#")
        for line in (DEPLOY / "overlays/report-only/rbac-report.yaml").read_text().splitlines()
        if line.startswith("#")
    ]
    start = next(i for i, line in enumerate(comment) if line.strip().startswith("patches:"))
    (patch,) = yaml.safe_load("\n".join(comment[start:]).replace("<cluster>", "lab"))["patches"]
    here = tmp_path / "mine"
    here.mkdir()
    (here / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(DEPLOY / "overlays" / "report-only", here)],
                "patches": [
                    {
                        "target": {"kind": "ConfigMap", "name": "kai-gitops-settings"},
                        "patch": '[{"op": "replace", "path": "/data/cluster", "value": "lab"}]',
                    },
                    patch,
                ],
            }
        )
    )
    assert report_role_names(render(here)) == [["kai-gitops-lab"]] * 4


def reconcile_requests(tmp_path: Path, *args: str, items: list[Obj] | None = None) -> list[RequestRecord]:
    """Requests of one `reconcile` of the demo under the default RBAC (cluster-wide Secret list refused)."""
    from tests.support.reconcile_support import demo_cluster

    for demo in demo_cluster(tmp_path, items):
        demo.server.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
        plant_reports(demo.server)
        code, out, err = demo.reconcile(*args)
        assert code == 2, out + err  # the operator's items (Helm releases, gates…) remain findings
        assert "KAI-R-016" in out
        if "--apply" in args:
            assert "Apply complete: 5 applied" in out, out + err
        return list(demo.server.requests)
    raise AssertionError("no demo cluster")


def cronjob_args(objects: list[Obj]) -> list[str]:
    job = next(o for o in objects if o["kind"] == "CronJob")
    return job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]


def test_report_only_grants_every_request_of_a_reconcile(tmp_path: Path) -> None:
    objects = rendered(tmp_path, "report-only")
    rules = bound_rules(objects)
    reporting = [a for a in cronjob_args(objects) if a.startswith("--report-to")]
    requests = reconcile_requests(tmp_path, *reporting)
    assert len(requests) > 10
    assert judge(requests, rules) == ([], [])
    writes = {(a[0], a[1], a[4]) for r in requests if r.method != "GET" and (a := attributes(r.method, r.path))}
    # both report APIs are served: each is listed, created, updated in place and its stale report deleted
    assert {(g, res, v) for g, res, v in writes if res in ("clusterpolicyreports", "policyreports")} >= {
        ("wgpolicyk8s.io", "clusterpolicyreports", "update"),
        ("wgpolicyk8s.io", "policyreports", "delete"),
    }
    assert {g for g, _, _ in writes} == {"wgpolicyk8s.io", "openreports.io"}
    # no grant broader than the requests: the names the role may delete are the names deleted
    deleted = {a[3] for r in requests if r.method == "DELETE" and (a := attributes(r.method, r.path))}
    assert {name for names in report_role_names(objects) for name in names or ["*"]} == deleted


def test_self_heal_grants_every_request_of_an_apply_and_nothing_it_does_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    objects = rendered(tmp_path, "self-heal")
    rules = bound_rules(objects)
    fixer = [r for r in rules if r[1] in ("kai-gitops-fixer", "kai-gitops-events", "kai-gitops-lease")]
    items = [
        i
        for i in load_demo_builder().prod_addon_snapshot()  # a missing queue: the apply creates it
        if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")
    ]
    shard = next(i for i in items if i["kind"] == "SchedulingShard")
    shard["spec"]["placementStrategy"]["gpu"] = "spread"  # and patches the shard (kai-config drifts already)
    extra = [a for a in cronjob_args(objects) if a.startswith(("--apply", "--lease-namespace=", "--report-to="))]
    requests = reconcile_requests(tmp_path, *extra, items=items)
    assert judge(requests, rules) == ([], [])
    used = [a for r in requests if r.status != 403 and (a := attributes(r.method, r.path)) is not None]
    unused = [
        (scope, name, rule, verb)
        for scope, name, rule in fixer
        for verb in rule["verbs"]
        if not any(a[4] == verb and allowed([(scope, name, rule)], a) for a in used)
    ]
    assert unused == []
    reader = [r for r in rules if r[1].startswith("kai-gitops-read")]
    writes = [a for a in used if a[4] not in READS and (a[0], a[1]) not in REPORT_RESOURCES]
    assert writes and not any(allowed(reader, a) for a in writes)  # the read roles alone refuse every write


def test_default_layout_reads_releases_in_kai_scheduler_only_and_says_so(
    demo_cluster: KubeTestServer, tmp_path: Path
) -> None:
    rules = bound_rules(rendered(tmp_path, "report-only"))
    assert not allowed(rules, ("", "secrets", None, None, "list"))
    demo_cluster.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
    live = read(demo_cluster)
    assert judge(demo_cluster.requests, rules) == ([], [])
    assert [r.path for r in demo_cluster.requests if r.status == 403] == ["/api/v1/secrets"]
    assert live.release_namespaces == ["kai-scheduler"]
    assert "HTTP 403" in live.release_search_reason
    assert [(r.namespace, r.name) for r in live.releases] == [("kai-scheduler", "kai-scheduler")]


def test_cluster_wide_component_finds_the_release_in_another_namespace(
    demo_cluster: KubeTestServer, tmp_path: Path
) -> None:
    rules = bound_rules(rendered(tmp_path, "self-heal", ("cluster-wide-releases",)))
    live = read(demo_cluster)
    assert judge(demo_cluster.requests, rules) == ([], [])
    assert live.release_namespaces is None
    assert sorted((r.namespace, r.name) for r in live.releases) == [
        ("kai-scheduler", "kai-scheduler"),
        ("runai", "kai"),
    ]


def test_diff_reports_not_checked_instead_of_failing(demo_cluster: KubeTestServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    args = [
        "diff",
        "--repo",
        str(repo),
        "--cluster",
        "prod-addon",
        "--kubeconfig",
        demo_cluster.kubeconfig,
        "-o",
        "json",
    ]
    wide = run_cli(args)
    demo_cluster.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
    narrow = run_cli(args)
    assert (wide.exit_code, narrow.exit_code) == (2, 2), narrow.stderr

    def rules_fired(result: Any) -> dict[str, list[str]]:
        fired: dict[str, list[str]] = {}
        for f in orjson.loads(result.stdout)["findings"]:
            fired.setdefault(f["rule"], []).append(f["message"])
        return fired

    assert "KAI-R-016" not in rules_fired(wide) and "KAI-R-011" in rules_fired(wide)
    fired = rules_fired(narrow)
    assert "KAI-R-011" not in fired and "KAI-R-010" not in fired  # runai/kai is not visible any more
    (message,) = fired["KAI-R-016"]
    assert message.startswith(
        "KAI Helm releases were searched only in namespace(s) kai-scheduler (reading Helm "
        "release Secrets from context prod (GET /api/v1/secrets?"
    )
    finding = next(f for f in orjson.loads(narrow.stdout)["findings"] if f["rule"] == "KAI-R-016")
    assert finding["severity"] == "info"  # least privilege alone never fails the CronJob


def test_snapshot_keeps_the_narrower_search(demo_cluster: KubeTestServer, tmp_path: Path) -> None:
    from reconciler.sources.snapshot_writer import snapshot_command

    demo_cluster.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
    snapshot_command(str(tmp_path / "snap.yaml"), demo_cluster.kubeconfig, None, settings=FAST)
    saved = read_snapshot(str(tmp_path / "snap.yaml"))
    assert saved.release_namespaces == ["kai-scheduler"] and "HTTP 403" in saved.release_search_reason


def test_namespaced_release_list_denied_too_is_one_clear_error(demo_cluster: KubeTestServer, tmp_path: Path) -> None:
    demo_cluster.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
    demo_cluster.inject_fault(Fault(r"^/api/v1/namespaces/kai-scheduler/secrets$", status=403, times=-1))
    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    result = run_cli(["diff", "--repo", str(repo), "--cluster", "prod-addon", "--kubeconfig", demo_cluster.kubeconfig])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "kai-gitops: error: reading Helm release Secrets in namespace kai-scheduler "
        "from context prod (GET /api/v1/namespaces/kai-scheduler/secrets?"
    )
    assert "HTTP 403" in result.stderr and "grant this identity the read role" in result.stderr
