"""The Helm chart on the real API server: `helm install`, the CronJob's command as the chart's ServiceAccount,
`helm uninstall`.

Per mode: the demo's add-on cluster is populated (tests/support/demo_cluster.py), every object the server holds is
listed, the chart installed with the real ``helm install --create-namespace`` as the admin, a token minted for
the chart's ServiceAccount (TokenRequest) and written into a kubeconfig, and the container of the CronJob Helm
installed (``helm get manifest``) run as the kubelet would run it (tests/real/test_deploy_rbac.py's run_as_pod:
``$(VAR)`` expanded, mounts mapped to temp dirs). The API server's audit log shows every request of the
ServiceAccount with the authorizer's answer: none may be refused but the documented cluster-wide Secret list
(KAI-R-016). Then ``helm uninstall``, and the server is listed again: what is left is exactly what the run wrote
(its reports; in selfHeal also the fixes it applied, their Events and its Lease) and the namespace Helm created.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.demo_cluster import nvca_agent, populate
from tests.support.deploy_cronjob_run import container_env, expand
from tests.support.deploy_helm_chart import CHART
from tests.support.deploy_manifests import main_container
from tests.support.envtest import EnvTest, running_server
from tests.support.helpers import make_bare_remote
from tests.support.real_deploy_rbac import (
    CLUSTER_WIDE_SECRET_LIST,
    DEMO,
    GIT_TOKEN,
    REPORT_PLURALS,
    Run,
    run_as_pod,
    wait_for_grants,
)
from tests.support.real_helm_install import NAMESPACE, RELEASE, SA_USER, Obj, helm, installed_objects

Identity = tuple[str, str, str, str]  # (group/plural, namespace, name, uid)
REPORTS = set(REPORT_PLURALS.values())


def inventory(cluster: EnvTest) -> set[Identity]:
    """Every object the server holds (each listable resource once, in its preferred version; an Event is listed
    by two groups, hence the uid in the identity, kept once)."""
    assert cluster.rest is not None
    found: dict[str, Identity] = {}
    for resource in cluster.discover():
        for item in cluster.rest.get(resource.path())["items"]:
            meta = item["metadata"]
            found.setdefault(
                meta["uid"],
                (f"{resource.group}/{resource.plural}", meta.get("namespace") or "", meta["name"], meta["uid"]),
            )
    return set(found.values())


@dataclass(frozen=True)
class Installed:
    """One mode's install, run and uninstall: helm's notes, the installed objects, the run, and the server's
    objects before the install, after the run and after the uninstall."""

    notes: str
    objects: list[Obj]
    run: Run
    before: set[Identity]
    after_run: set[Identity]
    after_uninstall: set[Identity]

    def left_behind(self) -> set[Identity]:
        return self.after_uninstall - self.before


def install_run_uninstall(cluster: EnvTest, mode: str, tmp: Path) -> Installed:
    cluster.reset()
    items = DEMO.prod_addon_snapshot()
    if mode == "selfHeal":  # a missing default Queue: the fix creates it
        items = [i for i in items if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")]
    populate(cluster, items)
    with nvca_agent(cluster):  # the agent's Pod and Service are the cluster's, made before the listing
        before = inventory(cluster)
        notes = helm(
            cluster,
            tmp,
            "install",
            RELEASE,
            str(CHART),
            "--namespace",
            NAMESPACE,
            "--create-namespace",
            "--set",
            f"mode={mode}",
            "--set",
            "settings.cluster=prod-addon",
            "--set",
            "image.repository=kai-gitops",
        )
        objects = installed_objects(cluster, tmp)
        run = run_cronjob_command(cluster, objects, tmp)
        after_run = inventory(cluster)
        release_unused_claims(cluster, NAMESPACE)
        helm(cluster, tmp, "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait")
        after_uninstall = inventory(cluster)
    return Installed(notes, objects, run, before, after_run, after_uninstall)


def release_unused_claims(cluster: EnvTest, namespace: str) -> None:
    """What kube-controller-manager's pvc-protection controller does, and no controller runs here: a claim no Pod
    uses (selfHeal's state claim, once the Job is done) loses its kubernetes.io/pvc-protection finalizer, so that
    deleting it (helm uninstall --wait) removes it."""
    path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    for claim in cluster.rest.get(path)["items"]:
        cluster.rest.call(
            "PATCH",
            f"{path}/{claim['metadata']['name']}",
            {"metadata": {"finalizers": None}},
            content_type="application/merge-patch+json",
        )


def run_cronjob_command(cluster: EnvTest, objects: list[Obj], tmp: Path) -> Run:
    """The installed CronJob's container, as the kubelet runs it, with a token of the chart's ServiceAccount."""
    with cluster.api_client() as admin:
        wait_for_grants(admin, SA_USER, objects)
    token = cluster.service_account_token(NAMESPACE, RELEASE, create=False)
    kubeconfig = cluster.write_kubeconfig(tmp / "token.kubeconfig", token=token, context="prod", user=SA_USER)
    container = main_container(objects)
    mounts = {m["mountPath"]: tmp / m["name"] for m in container["volumeMounts"]}
    for path in mounts.values():
        path.mkdir(exist_ok=True)
    repo = tmp / "repo"
    DEMO.build_repo(repo)
    env = container_env(objects, {"url": f"file://{make_bare_remote(tmp, repo)}", "token": GIT_TOKEN}, mounts)
    return run_as_pod(cluster, expand(container["args"], env, mounts), env, kubeconfig, "cronjob", cwd=tmp)


@pytest.fixture(scope="module")
def audited_cluster() -> Iterator[EnvTest]:
    """A server of its own: every object on it is listed before the install and after the uninstall."""
    yield from running_server(("helm",))


@pytest.fixture(scope="module")
def installs(audited_cluster: EnvTest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Installed]:
    return {
        mode: install_run_uninstall(audited_cluster, mode, tmp_path_factory.mktemp(mode))
        for mode in ("reportOnly", "selfHeal")
    }


@pytest.mark.parametrize("mode", ["reportOnly", "selfHeal"])
def test_the_cronjob_command_runs_as_the_charts_service_account_with_no_403(
    installs: dict[str, Installed], mode: str
) -> None:
    installed = installs[mode]
    run = installed.run
    assert run.code in (0, 2), run.stderr  # 2: the demo's error-level findings remain, the Job fails
    assert "error" not in [json.loads(line).get("level") for line in run.stderr.splitlines() if line.startswith("{")]
    assert run.requests
    denied = {(r.verb, r.group, r.resource, r.namespace) for r in run.requests if r.code in (401, 403)}
    assert denied == {CLUSTER_WIDE_SECRET_LIST}  # documented: without clusterWideReleases, KAI-R-016 says so
    report = run.report()
    assert "KAI-R-016" in {f["rule"] for f in report["findings"]}
    writes = {r.resource for r in run.requests if r.verb not in ("get", "list", "watch")}
    if mode == "selfHeal":
        assert report["apply"]["ok"] and report["apply"]["applied"] >= 1
        assert {"queues", "leases", "events"} <= writes
    else:
        assert "apply" not in report or not report["apply"]
        assert writes <= REPORTS and writes


@pytest.mark.parametrize("mode", ["reportOnly", "selfHeal"])
def test_helm_uninstall_leaves_only_what_the_run_wrote(installs: dict[str, Installed], mode: str) -> None:
    installed = installs[mode]
    added = {(p, ns, name) for p, ns, name, _ in installed.after_run - installed.before}
    left = {(p, ns, name) for p, ns, name, _ in installed.left_behind()}
    chart = _identities(installed.objects)
    assert chart <= added and len(chart) == len(installed.objects)  # every object of the chart was there ...
    assert not chart & left  # ... and is gone
    assert not installed.before - installed.after_uninstall  # nothing that was there before went missing
    reports = {item for item in left if item[0].split("/")[1] in REPORTS}
    assert reports == {item for item in added if item[0].split("/")[1] in REPORTS}  # the run's reports stay
    assert {name for _, _, name in reports} == {"kai-gitops-prod-addon"} and len(reports) == 8
    expected = {("/namespaces", "", NAMESPACE)}  # helm never deletes the namespace it created
    if mode == "selfHeal":  # the Queue it created, its Events, its Lease
        expected |= {
            ("scheduling.run.ai/queues", "", "default-queue"),
            ("coordination.k8s.io/leases", NAMESPACE, "kai-gitops-reconcile"),
        }
        expected |= {item for item in left if item[0].endswith("/events") and item[1] == "default"}
    assert left - reports == expected


def test_the_install_notes_say_what_to_create_and_how_to_run_it(installs: dict[str, Installed]) -> None:
    notes = installs["reportOnly"].notes
    assert "kubectl -n kai-gitops create secret generic kai-gitops-git" in notes
    assert "kubectl -n kai-gitops create job --from=cronjob/kai-gitops kai-gitops-now" in notes
    assert "It changes nothing in the cluster" in notes
    assert "under Lease kai-gitops/kai-gitops-reconcile" in installs["selfHeal"].notes


def _identities(objects: list[Obj]) -> set[tuple[str, str, str]]:
    """(group/plural, namespace, name) as inventory() lists them (every kind of the chart has a regular plural)."""
    return {
        (
            o["apiVersion"].rpartition("/")[0] + "/" + o["kind"].lower() + "s",
            o["metadata"].get("namespace", ""),
            o["metadata"]["name"],
        )
        for o in objects
    }
