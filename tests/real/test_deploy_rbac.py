"""deploy/'s RBAC judged by the real authorizer: each variant is rendered with ``kubectl kustomize``, applied
with ``kubectl apply``, and the CronJob's own command runs as its ServiceAccount against the demo cluster.

Per variant (the base alone, which runs `diff`; report-only; report-only with the opt-in component
cluster-wide-releases; self-heal): the demo's add-on cluster is populated (tests/support/demo_cluster.py) with
the report objects an earlier run left (ours to update, ours now stale, and others' that must stay), the
variant applied, a token minted for ServiceAccount kai-gitops/kai-gitops (TokenRequest) and written into a
kubeconfig, and the rendered container's args run with the installed ``kai-gitops`` as the kubelet would
expand them, only the paths mapped (repository URL → a local bare clone, mounts → temp dirs, in-cluster
credentials → the token kubeconfig). The API server's audit log records every request the ServiceAccount
made, with the authorizer's decision and the role that allowed it. An overlay that writes reports also
makes one report sync that meets a concurrent writer: the 409 path re-reads the report, the only use of
`get` on report objects.

The matrix: every request any run made, asked of the real authorizer (SubjectAccessReview) under every
variant, each variant's roles bound side by side to a ServiceAccount of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from tests.support.demo_cluster import apply_deploy, nvca_agent, populate
from tests.support.deploy_cronjob_run import container_env, expand
from tests.support.deploy_manifests import main_container, variant_dir
from tests.support.envtest import DEFAULT_CRD_FILES, EnvTest, running_server
from tests.support.helpers import FIXTURES, ROOT, make_bare_remote
from tests.support.real_deploy_rbac import (
    CLUSTER_WIDE_SECRET_LIST,
    DEMO,
    GIT_TOKEN,
    NAMESPACE,
    REPORT_PLURALS,
    SA_USER,
    SERVICE_ACCOUNT,
    Obj,
    Request,
    Run,
    access_review,
    audited,
    grants,
    run_as_pod,
    wait_for_grants,
)

DEPLOY = ROOT / "deploy"
VARIANTS = ("base", "report-only", "report-only+cluster-wide-releases", "self-heal")
OVERLAYS = ("report-only", "report-only+cluster-wide-releases", "self-heal")
WG, OPEN = "wgpolicyk8s.io/v1alpha2", "openreports.io/v1alpha1"
OURS = {"app.kubernetes.io/managed-by": "kai-gitops", "kai-gitops/cluster": "prod-addon"}


@dataclass
class Deployment:
    variant: str
    objects: list[Obj]
    runs: list[Run] = field(default_factory=list)
    planted: dict[str, str] = field(default_factory=dict)  # report path -> uid, before the runs
    probes: dict[str, int] = field(default_factory=dict)  # a request tried with the token -> HTTP status
    after: dict[str, Any] = field(default_factory=dict)  # cluster state read back after the runs

    @property
    def requests(self) -> list[Request]:
        return [r for run in self.runs for r in run.requests]

    def run(self, label: str) -> Run:
        return next(r for r in self.runs if r.label == label)


# -- the variant, applied and run ----------------------------------------------------------------------


def directory(variant: str, tmp: Path) -> Path:
    if variant == "base":
        return DEPLOY / "base"
    overlay, _, components = variant.partition("+")
    return variant_dir(tmp, overlay, tuple(c for c in components.split("+") if c))


EARLIER_REPORTS = (  # (apiVersion, kind, name, namespace, labels) of reports an earlier run left, and others'
    (WG, "ClusterPolicyReport", "kai-gitops-prod-addon", None, OURS),  # ours, to update
    (OPEN, "ClusterReport", "kai-gitops-prod-addon", None, OURS),
    (WG, "PolicyReport", "kai-gitops-prod-addon", "nvcf-backend", OURS),
    (OPEN, "Report", "kai-gitops-prod-addon", "nvcf-backend", OURS),
    (WG, "ClusterPolicyReport", "kai-gitops-prod-addon-v0", None, OURS),  # our labels, not our name: kept
    (OPEN, "ClusterReport", "kai-gitops-prod-addon-v0", None, OURS),
    (WG, "PolicyReport", "kai-gitops-prod-addon", "retired", OURS),  # ours, stale: to delete
    (OPEN, "Report", "kai-gitops-prod-addon", "retired", OURS),
    (WG, "PolicyReport", "kyverno-pol", "retired", {"app.kubernetes.io/managed-by": "kyverno"}),  # others'
    (WG, "PolicyReport", "kai-gitops-lab", "retired", {**OURS, "kai-gitops/cluster": "lab"}),
)


def report_path(api: str, kind: str, namespace: str | None, name: str | None = None) -> str:
    return (
        f"/apis/{api}/"
        + (f"namespaces/{namespace}/" if namespace else "")
        + REPORT_PLURALS[kind]
        + (f"/{name}" if name else "")
    )


def plant_reports(cluster: EnvTest) -> dict[str, str]:
    """The reports of EARLIER_REPORTS, empty; their uids by path."""
    assert cluster.rest is not None
    cluster.create_namespace("retired", exist_ok=True)
    uids = {}
    for api, kind, name, namespace, labels in EARLIER_REPORTS:
        body: Obj = {"apiVersion": api, "kind": kind, "metadata": {"name": name, "labels": labels}}
        if namespace:
            body["metadata"]["namespace"] = namespace
        if api == WG:
            body["results"] = []
        created = cluster.rest.call("POST", report_path(api, kind, namespace), body, ok=(201,))
        uids[report_path(api, kind, namespace, name)] = created["metadata"]["uid"]
    return uids


def try_queue_patch(cluster: EnvTest, token: str) -> int:
    """What the ServiceAccount gets for a merge patch of a Queue's quota (its token; a dry run, which the
    authorizer judges like the real write)."""
    with cluster.api_client(token=token) as client:
        try:
            kubernetes.client.CustomObjectsApi(client).patch_cluster_custom_object(
                "scheduling.run.ai",
                "v2",
                "queues",
                "default-parent-queue",
                {"spec": {"resources": {"gpu": {"quota": 1}}}},
                dry_run="All",
            )
        except kubernetes.client.ApiException as refused:
            return refused.status
    return 200


def concurrent_report_sync(cluster: EnvTest, token: str) -> Run:
    """One report sync as the ServiceAccount in which every update meets a concurrent writer: each PUT is
    preceded by an admin edit of the same object, so the real server answers 409 and the writer re-reads.
    Its reports are the deployed cluster's (prod-addon: the only name the role may update), so the
    cronjob's are removed first (the admin) and the sync creates, then updates them."""
    from dataclasses import replace

    from reconciler.findings.finding import Severity
    from reconciler.publish.policyreport import write_policy_reports
    from tests.support.cluster_session import envtest_session
    from tests.support.report_policyreport import SAMPLE, backend_ref, finding
    from tests.support.report_policyreport import report as sample_report

    def report(*findings: Any) -> Any:
        sample = sample_report(*findings)
        return replace(sample, clusters=[replace(c, cluster="prod-addon") for c in sample.clusters])

    assert cluster.rest is not None and cluster.pki is not None
    rest = cluster.rest
    for api, kind in ((WG, "PolicyReport"), (WG, "ClusterPolicyReport"), (OPEN, "Report"), (OPEN, "ClusterReport")):
        for item in rest.get(report_path(api, kind, None))["items"]:
            if item["metadata"]["name"] == "kai-gitops-prod-addon":
                rest.call(
                    "DELETE",
                    report_path(api, kind, item["metadata"].get("namespace"), "kai-gitops-prod-addon"),
                    None,
                    ok=(200, 202),
                )

    touched: set[str] = set()

    def concurrent_edit(method: str, path: str, _body: Any) -> None:
        if method == "PUT" and path not in touched:
            touched.add(path)
            rest.call(
                "PATCH",
                path,
                {"metadata": {"annotations": {"team.example.com/seen": "yes"}}},
                content_type="application/merge-patch+json",
            )

    mark = cluster.audit_offset()
    session = envtest_session(cluster, token=token, seen=concurrent_edit)
    try:
        write_policy_reports(session, report(*SAMPLE))
        # the cluster report loses the waived finding, the nvcf-backend report's message changes
        changed = finding("NVCA-G-004", backend_ref(), Severity.WARNING, message="gate Bar unknown")
        [result] = write_policy_reports(session, report(SAMPLE[0], changed, SAMPLE[2]))
    finally:
        session.close()
    run = Run("concurrent writer", 0, json.dumps(result.__dict__), "")
    run.requests = audited(cluster, mark)
    return run


def deploy_and_run(cluster: EnvTest, variant: str, tmp: Path) -> Deployment:
    cluster.reset()
    items = DEMO.prod_addon_snapshot()
    if variant == "self-heal":  # a missing default Queue: the fix creates it
        items = [i for i in items if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")]
        shard = next(i for i in items if i["kind"] == "SchedulingShard")
        shard["spec"]["placementStrategy"]["gpu"] = "spread"  # and patches the shard; kai-config drifts already
    populate(cluster, items)
    planted = plant_reports(cluster)
    deployment = Deployment(variant, apply_deploy(cluster, directory(variant, tmp)), planted=planted)
    with cluster.api_client() as admin:
        wait_for_grants(admin, SA_USER, deployment.objects)
    token = cluster.service_account_token(NAMESPACE, SERVICE_ACCOUNT, create=False)
    # the repository's kubeContext for prod-addon; in-cluster the context is ignored
    kubeconfig = cluster.write_kubeconfig(tmp / "token.kubeconfig", token=token, context="prod", user=SA_USER)
    container = main_container(deployment.objects)
    mounts = {m["mountPath"]: tmp / m["name"] for m in container["volumeMounts"]}
    for path in mounts.values():
        path.mkdir(exist_ok=True)
    repo = tmp / "repo"
    DEMO.build_repo(repo)
    remote = make_bare_remote(tmp, repo)
    env = container_env(deployment.objects, {"url": f"file://{remote}", "token": GIT_TOKEN}, mounts)
    with nvca_agent(cluster):
        deployment.runs.append(
            run_as_pod(cluster, expand(container["args"], env, mounts), env, kubeconfig, "cronjob", cwd=tmp)
        )
    deployment.probes["patch scheduling.run.ai/queues default-parent-queue"] = try_queue_patch(cluster, token)
    deployment.after = read_back(cluster)  # what the CronJob's run left
    if any(o["metadata"]["name"] == "kai-gitops-report" for o in deployment.objects):
        deployment.runs.append(concurrent_report_sync(cluster, token))
    return deployment


def read_back(cluster: EnvTest) -> dict[str, Any]:
    assert cluster.rest is not None
    rest = cluster.rest
    return {
        "queues": {q["metadata"]["name"]: q for q in rest.get("/apis/scheduling.run.ai/v2/queues")["items"]},
        "nodes": {n["metadata"]["name"]: n for n in rest.get("/api/v1/nodes")["items"]},
        "kai-config": rest.get("/apis/kai.scheduler/v1/configs/kai-config"),
        "shards": {s["metadata"]["name"]: s for s in rest.get("/apis/kai.scheduler/v1/schedulingshards")["items"]},
        "events": rest.get("/apis/events.k8s.io/v1/namespaces/default/events")["items"],
        "policyreports": rest.get("/apis/wgpolicyk8s.io/v1alpha2/policyreports")["items"],
        "clusterpolicyreports": rest.get("/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports")["items"],
        "reports": rest.get("/apis/openreports.io/v1alpha1/reports")["items"],
        "clusterreports": rest.get("/apis/openreports.io/v1alpha1/clusterreports")["items"],
    }


GROVE_BINDING_CRD = FIXTURES / "grove" / "grove.io_clustertopologybindings.yaml"
KRM_CRDS = tuple(sorted((FIXTURES / "krm").glob("*.yaml")))  # KAI Resource Management's kinds, listed when served


@pytest.fixture(scope="module")
def audited_cluster() -> Iterator[EnvTest]:
    """A server of its own, serving Grove's ClusterTopologyBinding and KAI Resource Management's kinds too, so the
    reader lists them as on a cluster with Grove and KRM (and every grant of the read role is used)."""
    yield from running_server(("kubectl",), crd_files=(*DEFAULT_CRD_FILES, GROVE_BINDING_CRD, *KRM_CRDS))


@pytest.fixture(scope="module")
def deployments(audited_cluster: EnvTest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Deployment]:
    return {v: deploy_and_run(audited_cluster, v, tmp_path_factory.mktemp(v.replace("+", "-"))) for v in VARIANTS}


# -- what the authorizer said ------------------------------------------------------------------------


def refused(deployment: Deployment) -> list[Request]:
    return [r for r in deployment.requests if r.code in (401, 403)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_request_is_allowed_but_the_documented_cluster_wide_secret_list(
    deployments: dict[str, Deployment], variant: str
) -> None:
    """docs/deployment.md: without cluster-wide-releases the reader's cluster-wide Secret list is refused and
    it reads kai-scheduler instead (KAI-R-016, info); nothing else of any run may be refused."""
    deployment = deployments[variant]
    for run in deployment.runs:
        assert run.code in (0, 2), (run.label, run.stderr)  # 2: the demo's findings remain, the Job fails
        assert "error" not in [
            json.loads(line).get("level") for line in run.stderr.splitlines() if line.startswith("{")
        ], run.stderr
        assert run.requests, run.label
    denied = {(r.verb, r.group, r.resource, r.namespace) for r in refused(deployment)}
    if "cluster-wide-releases" in variant:
        assert denied == set()
    else:
        assert denied == {CLUSTER_WIDE_SECRET_LIST}
        assert "KAI-R-016" in deployment.runs[0].stdout


@pytest.mark.parametrize("variant", ["base", "report-only", "report-only+cluster-wide-releases"])
def test_read_and_report_modes_are_refused_a_queue_patch(deployments: dict[str, Deployment], variant: str) -> None:
    deployment = deployments[variant]
    assert deployment.probes == {"patch scheduling.run.ai/queues default-parent-queue": 403}
    writes = {(r.verb, r.group, r.resource) for r in deployment.requests if r.verb not in ("get", "list", "watch")}
    report_kinds = {"policyreports", "clusterpolicyreports", "reports", "clusterreports"}
    assert {resource for _, _, resource in writes} <= report_kinds
    queue = deployment.after["queues"]["default-parent-queue"]
    assert queue["spec"]["resources"]["cpu"]["quota"] == 0  # the demo's drift, left as it was


def test_self_heal_applies_its_fixes(deployments: dict[str, Deployment]) -> None:
    deployment = deployments["self-heal"]
    apply = deployment.run("cronjob").report()["apply"]
    assert (apply["ok"], apply["applied"], apply["failed"]) == (True, 5, 0)
    assert apply["warnings"] == []  # every change got its Event
    queues = deployment.after["queues"]
    assert {r: queues["default-parent-queue"]["spec"]["resources"][r]["quota"] for r in ("cpu", "gpu", "memory")} == {
        "cpu": -1,
        "gpu": -1,
        "memory": -1,
    }
    (created,) = [c["manifest"] for c in deployment.run("cronjob").report()["plan"]["changes"] if c["manifest"]]
    assert queues["default-queue"]["spec"] == created["spec"]  # created, nothing of it pruned by the CRD
    assert created["spec"]["parentQueue"] == "default-parent-queue"
    assert created["metadata"].items() <= queues["default-queue"]["metadata"].items()
    assert "nvca.nvcf.nvidia.io/schedule" not in deployment.after["nodes"]["gpu-node-2"]["metadata"]["labels"]
    events = {(e["regarding"]["kind"], e["regarding"]["name"]): e["reason"] for e in deployment.after["events"]}
    assert events == {
        ("Queue", "default-queue"): "QueueCreated",
        ("Queue", "default-parent-queue"): "QueueUpdated",
        ("Node", "gpu-node-2"): "NodeLabelChanged",
        ("Config", "kai-config"): "ConfigUpdated",
        ("SchedulingShard", "default"): "SchedulingShardUpdated",
    }
    # kai-config and the shard, read back from the real server: the drifted fields are Git's again
    assert deployment.after["kai-config"]["spec"]["admission"]["gpuSharing"] is False
    assert deployment.after["shards"]["default"]["spec"]["placementStrategy"] == {"gpu": "binpack", "cpu": "binpack"}
    assert deployment.probes == {"patch scheduling.run.ai/queues default-parent-queue": 200}


@pytest.mark.parametrize("variant", OVERLAYS)
def test_reports_are_updated_in_place_and_only_ours_deleted(deployments: dict[str, Deployment], variant: str) -> None:
    after = deployments[variant].after
    live = {
        report_path(o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for plural in REPORT_PLURALS.values()
        for o in after[plural]
    }
    for api, kind, name, namespace, labels in EARLIER_REPORTS:
        path = report_path(api, kind, namespace, name)
        if labels != OURS or name.endswith("-v0"):
            assert path in live, path  # others' reports (by label or name): kept
        elif namespace == "retired":
            assert path not in live, path  # ours and stale: deleted
        else:
            assert live[path]["metadata"]["uid"] == deployments[variant].planted[path]  # ours: in place
            assert live[path]["results"], path
    created = report_path(WG, "PolicyReport", "nvca-operator", "kai-gitops-prod-addon")
    assert live[created]["metadata"]["labels"] == OURS


def test_an_update_meeting_a_concurrent_writer_rereads_and_retries(deployments: dict[str, Deployment]) -> None:
    run = deployments["report-only"].run("concurrent writer")
    assert sorted(json.loads(run.stdout)["updated"]) == [
        "ClusterPolicyReport/kai-gitops-prod-addon",
        "ClusterReport/kai-gitops-prod-addon",
        "PolicyReport/nvcf-backend/kai-gitops-prod-addon",
        "Report/nvcf-backend/kai-gitops-prod-addon",
    ]
    for plural in REPORT_PLURALS.values():
        calls = [(r.verb, r.code) for r in run.requests if r.resource == plural and r.verb in ("get", "update")]
        assert calls == [("update", 409), ("get", 200), ("update", 200)], (plural, calls)


# -- no grant goes unused ----------------------------------------------------------------------------


def unused_grants(deployment: Deployment) -> list[tuple[str | None, str, str, str, str, str | None]]:
    """Every (role, verb, resource, resourceName) no request of the runs was allowed by. Where two bound roles
    grant the same rule (self-heal's fixer role gets kai-config, as the read role does), the authorizer names
    whichever binding it visits first, in no fixed order: a request allowed by either uses both."""
    held = grants(deployment.objects)

    def holders(grant: tuple[str | None, str, str, str, str, str | None]) -> set[str]:
        return {g[1] for g in held if (g[0], *g[2:]) == (grant[0], *grant[2:])}

    def used(grant: tuple[str | None, str, str, str, str, str | None]) -> bool:
        namespace, _role, verb, group, resource, name = grant
        roles = holders(grant)
        return any(
            r.allowed_by in roles
            and r.verb == verb
            and r.group == group
            and r.resource == resource
            and (namespace is None or r.namespace == namespace)
            and (name is None or r.name == name)
            for r in deployment.requests
        )

    return [g for g in held if not used(g)]


@pytest.mark.parametrize("variant", OVERLAYS)
def test_no_grant_goes_unused(deployments: dict[str, Deployment], variant: str) -> None:
    """Each rule (verb × resource × resourceName) of each role the overlay binds served a request of its runs.
    With cluster-wide-releases the namespaced release list is never needed: the component widens it."""
    deployment = deployments[variant]
    unused = unused_grants(deployment)
    if "cluster-wide-releases" in variant:
        assert unused == [("kai-scheduler", "kai-gitops-read-releases", "list", "", "secrets", None)]
    else:
        assert unused == []


# -- the matrix --------------------------------------------------------------------------------------


RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def side_by_side(objects: list[Obj], index: int) -> list[Obj]:
    """The variant's roles and bindings renamed with a suffix and bound to ServiceAccount kai-gitops-m<index>,
    so every variant's grants can be judged at once without one revoking another's."""
    suffix, renamed = f"-m{index}", []
    for obj in objects:
        if obj["kind"] not in RBAC_KINDS:
            continue
        copy = json.loads(json.dumps(obj))
        copy["metadata"]["name"] += suffix
        if "roleRef" in copy:
            copy["roleRef"]["name"] += suffix
            copy["subjects"] = [{**s, "name": SERVICE_ACCOUNT + suffix} for s in copy["subjects"]]
        renamed.append(copy)
    return renamed


def matrix(deployments: dict[str, Deployment], cluster: EnvTest) -> dict[tuple[str, ...], dict[str, str]]:
    """Every request any run made (and the probes), asked of the authorizer under every variant."""
    made: dict[tuple[str, ...], dict[str, int]] = {}
    for variant, deployment in deployments.items():
        for request in deployment.requests:
            made.setdefault(request.key, {})[variant] = request.code
        for probe, status in deployment.probes.items():
            verb, resource, name = probe.split(" ")
            group, plural = resource.split("/")
            made.setdefault((verb, group, plural, "", name), {})[variant] = status
    for key in OTHERS_DELETES:
        made.setdefault(key, {})
    assert cluster.kubeconfig is not None
    users = {}
    for index, (variant, deployment) in enumerate(deployments.items()):
        renamed = side_by_side(deployment.objects, index)
        kubectl_apply(cluster, renamed)
        users[variant] = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}-m{index}"
        with cluster.api_client() as admin:
            wait_for_grants(admin, users[variant], renamed)
    rows: dict[tuple[str, ...], dict[str, str]] = {}
    with cluster.api_client() as admin:
        for key, codes in made.items():
            rows[key] = {
                v: _cell(access_review(admin, users[v], *key[:4], key[4] or None), codes.get(v)) for v in deployments
            }
    return rows


def kubectl_apply(cluster: EnvTest, objects: list[Obj]) -> None:
    from tests.support.demo_cluster import kubectl

    assert cluster.kubeconfig is not None
    kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}),
        kubeconfig=cluster.kubeconfig,
    )


def _cell(allowed: bool, code: int | None) -> str:
    if code is None:
        return "allow" if allowed else "deny"
    if code in (401, 403):
        return "DENIED 403" if not allowed else "DENIED?"
    return f"ALLOWED {code}" if allowed else "ALLOWED?"


def test_rbac_matrix(deployments: dict[str, Deployment], audited_cluster: EnvTest) -> None:
    """Printed for the record (pytest -rP shows it). Upper case: a run of that variant made the request, and
    the server's answer; lower case: the authorizer's answer to a SubjectAccessReview for a request the
    variant's runs did not make."""
    rows = matrix(deployments, audited_cluster)
    for key, cells in rows.items():
        for variant, cell in cells.items():  # the authorizer's review agrees with what the runs met
            assert cell not in ("ALLOWED?", "DENIED?"), (key, variant, cell)
    width = max(len(_row_name(k)) for k in rows)
    lines = [f"{'request':<{width}}  " + "  ".join(f"{v:<33}"[:33] for v in VARIANTS)]
    for key in sorted(rows, key=_row_name):
        lines.append(f"{_row_name(key):<{width}}  " + "  ".join(f"{rows[key][v]:<33}" for v in VARIANTS))
    print("\nRBAC matrix: ServiceAccount kai-gitops/kai-gitops, per variant of deploy/\n" + "\n".join(lines))
    assert rows[("patch", "scheduling.run.ai", "queues", "", "default-parent-queue")] == {
        "base": "DENIED 403",
        "report-only": "DENIED 403",
        "report-only+cluster-wide-releases": "DENIED 403",
        "self-heal": "ALLOWED 200",
    }
    assert rows[("list", "", "secrets", "", "")] == {
        "base": "DENIED 403",
        "report-only": "DENIED 403",
        "report-only+cluster-wide-releases": "ALLOWED 200",
        "self-heal": "DENIED 403",
    }


# Deletes no run makes: of the planted reports that are not the tool's (by label, or by name only)
OTHERS_DELETES = [
    ("delete", api.split("/")[0], REPORT_PLURALS[kind], namespace or "", name)
    for api, kind, name, namespace, labels in EARLIER_REPORTS
    if labels != OURS or name != "kai-gitops-prod-addon"
]


@pytest.mark.parametrize("variant", OVERLAYS)
def test_no_delete_grant_is_broader_than_the_deletes(deployments: dict[str, Deployment], variant: str) -> None:
    """The report role may delete exactly what the runs deleted: the namespaced reports named
    kai-gitops-<cluster> (the cluster-scoped one always stays). A delete grant without resourceNames would
    reach every PolicyReport of the cluster."""
    deployment = deployments[variant]
    granted = {
        (group, resource, name) for _, _, verb, group, resource, name in grants(deployment.objects) if verb == "delete"
    }
    deleted = {(r.group, r.resource, r.name) for r in deployment.requests if r.verb == "delete" and r.code == 200}
    assert (
        granted
        == deleted
        == {
            ("wgpolicyk8s.io", "policyreports", "kai-gitops-prod-addon"),
            ("openreports.io", "reports", "kai-gitops-prod-addon"),
        }
    )


def test_the_authorizer_refuses_every_delete_of_others_reports(
    deployments: dict[str, Deployment], audited_cluster: EnvTest
) -> None:
    rows = matrix(deployments, audited_cluster)
    assert OTHERS_DELETES and all(set(rows[key].values()) == {"deny"} for key in OTHERS_DELETES), {
        key: rows[key] for key in OTHERS_DELETES
    }
    ours = [key for key in rows if key[0] == "delete"]
    assert ours and all(rows[key]["report-only"] == "ALLOWED 200" for key in ours if key not in OTHERS_DELETES)


def _row_name(key: tuple[str, ...]) -> str:
    verb, group, resource, namespace, name = key
    where = f"{namespace}/" if namespace else ""
    return f"{verb} {group + '/' if group else ''}{resource} {where}{name or '*'}"
