"""deploy/helm/kai-gitops: the chart renders the objects of deploy/'s Kustomize tree, for each mode and component.

Rendering is the real `helm template` (tests/support/tools.py; skipped without the tools, failed under CI=true)
and, for Kustomize, what the deploy/ tests render (tests/support/kustomize.py, itself checked against
`kubectl kustomize`). Helm's own labels (helm.sh/chart, app.kubernetes.io/managed-by, /instance, /version) are
the only difference allowed; objects are compared by identity, so order does not matter. The chart's output is
validated with kubernetes-validate, strict, as deploy/'s is (tests/deploy/test_deploy_manifests.py), and `helm lint
--strict` runs over every combination.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.support.deploy_helm_chart import CHART
from tests.support.deploy_manifests import COMPONENTS, K8S_VERSIONS, main_container, pod_spec, rendered
from tests.support.helpers import ROOT
from tests.support.kustomize import identity
from tests.support.tools import require_tool

RELEASE = NAMESPACE = "kai-gitops"
MODES = {"reportOnly": "report-only", "selfHeal": "self-heal"}
# The chart's value that turns on each of deploy/'s components.
COMPONENT_VALUES = {
    "opa-sidecar": "opaSidecar",
    "cluster-wide-releases": "clusterWideReleases",
    "metrics-push": "metricsPush",
    "audit-log": "auditLog",
}
COMBINATIONS = [
    (mode, combo)
    for mode in MODES
    for n in range(len(COMPONENTS) + 1)
    for combo in itertools.combinations(COMPONENTS, n)
]
HELM_LABELS = (
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
)
Obj = dict[str, Any]


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(require_tool("helm")), *args], capture_output=True, text=True, timeout=60)


def chart_values(mode: str, components: tuple[str, ...], *, namespace: bool = True) -> list[str]:
    """--set arguments for a mode and components (and the Namespace object, which deploy/ always has)."""
    sets = [f"mode={mode}", f"namespace.create={str(namespace).lower()}"]
    sets += [f"{COMPONENT_VALUES[c]}.enabled=true" for c in components]
    return [arg for s in sets for arg in ("--set", s)]


# The two values an install must give (values.yaml leaves them empty): deploy/'s base names the same cluster and
# image, which the chart-versus-Kustomize comparison needs. Later --set arguments win.
REQUIRED = ["--set", "settings.cluster=prod-addon", "--set", "image.repository=kai-gitops"]


def template(*args: str, release: str = RELEASE, namespace: str = NAMESPACE) -> list[Obj]:
    done = helm("template", release, str(CHART), "--namespace", namespace, *REQUIRED, *args)
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def without_helm_labels(obj: Obj) -> Obj:
    obj = json.loads(json.dumps(obj))
    holders = [obj.get("metadata") or {}]
    if obj["kind"] == "CronJob":
        holders.append(obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"])
    for meta in holders:
        for label in HELM_LABELS:
            meta.get("labels", {}).pop(label, None)
    return obj


def by_identity(objects: list[Obj]) -> dict[tuple[str, str, str, str], Obj]:
    found = {identity(o): o for o in objects}
    assert len(found) == len(objects), "two objects of the same identity"
    return found


@pytest.mark.parametrize(("mode", "components"), COMBINATIONS)
def test_chart_and_kustomize_render_the_same_objects(tmp_path: Path, mode: str, components: tuple[str, ...]) -> None:
    ours = by_identity([without_helm_labels(o) for o in template(*chart_values(mode, components))])
    kustomize = by_identity(rendered(tmp_path, MODES[mode], components))
    assert sorted(ours) == sorted(kustomize)
    for key, obj in kustomize.items():
        assert ours[key] == obj, key


def test_helm_install_leaves_the_namespace_to_helm(tmp_path: Path) -> None:
    """`helm install --create-namespace` (the default, namespace.create false) makes the namespace itself: every
    other object is deploy/'s."""
    ours = {identity(o) for o in template()}
    kustomize = {identity(o) for o in rendered(tmp_path, "report-only")}
    assert kustomize - ours == {("v1", "Namespace", "", NAMESPACE)}
    assert ours < kustomize


def test_helm_labels_are_the_only_difference_and_they_are_there() -> None:
    for obj in template():
        assert {label for label in HELM_LABELS if label in obj["metadata"]["labels"]} == set(HELM_LABELS), identity(obj)
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"


@pytest.mark.parametrize("mode", MODES)
def test_every_object_validates_against_the_kubernetes_schemas(mode: str) -> None:
    for obj in template(*chart_values(mode, COMPONENTS)):
        for version in K8S_VERSIONS:
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                path = ".".join(str(p) for p in exc.path)
                pytest.fail(f"{identity(obj)} against {version}: {path}: {exc.message}")


@pytest.mark.parametrize(("mode", "components"), [(m, c) for m in MODES for c in ((), COMPONENTS)])
def test_helm_lint_strict_passes(mode: str, components: tuple[str, ...]) -> None:
    done = helm("lint", "--strict", str(CHART), "--namespace", NAMESPACE, *REQUIRED, *chart_values(mode, components))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        ("mode=selfheal", "at '/mode': value must be one of 'reportOnly', 'selfHeal'"),
        ("image.tagg=1", "at '/image': additional properties 'tagg' not allowed"),
        ("surprise=1", "additional properties 'surprise' not allowed"),
        ("opaSidecar.enabled=yes", "at '/opaSidecar/enabled': got string, want boolean"),
        ("image.pullPolicy=Sometimes", "at '/image/pullPolicy': value must be one of"),
        ("image.digest=latest", "at '/image/digest'"),
        ("gitSecret.name=My_Secret", "at '/gitSecret/name'"),
        ("schedule=hourly", "at '/schedule'"),
        # Values written into the CronJob as they are: a line break or a space would change or break its YAML.
        ("timeZone=Etc/UTC\n  suspend: true", "at '/timeZone'"),
        ("timeZone=0", "at '/timeZone'"),
        ("image.tag=1.0 evil", "at '/image/tag'"),
        ("image.repository=Registry.local/kai gitops", "at '/image/repository'"),
        ("opaSidecar.image.tag=", "at '/opaSidecar/image/tag'"),
    ],
)
def test_the_schema_refuses_unknown_keys_and_wrong_values(setting: str, error: str) -> None:
    strings = "enabled" in setting or "timeZone" in setting or "tag=" in setting
    done = helm("template", RELEASE, str(CHART), "--set-string" if strings else "--set", setting)
    assert done.returncode == 1
    assert error in done.stderr, done.stderr


def test_values_reach_the_cronjob_and_settings() -> None:
    digest = "sha256:" + "ab" * 32
    objects = template(
        "--set",
        "image.repository=registry.local/platform/kai-gitops",
        "--set",
        "image.tag=9.9.9",
        "--set",
        "schedule=@daily",
        "--set",
        "timeZone=Europe/Berlin",
        "--set",
        "gitSecret.name=git",
        "--set",
        "settings.cluster=lab",
        "--set",
        "settings.ref=main",
        "--set",
        "resources.limits.memory=1Gi",
        "--set",
        "image.pullPolicy=Always",
    )
    (job,) = [o for o in objects if o["kind"] == "CronJob"]
    container = main_container(objects)
    assert container["image"] == "registry.local/platform/kai-gitops:9.9.9"
    assert container["imagePullPolicy"] == "Always"
    assert container["resources"]["limits"]["memory"] == "1Gi"
    assert (job["spec"]["schedule"], job["spec"]["timeZone"]) == ("@daily", "Europe/Berlin")
    secrets = {
        e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"] if "secretKeyRef" in e.get("valueFrom", {})
    }
    assert secrets == {"git"}
    (settings,) = [o for o in objects if o["kind"] == "ConfigMap"]
    assert settings["data"] == {"cluster": "lab", "ref": "main"}
    pinned = template("--set", f"image.digest={digest}", "--set", "image.tag=9.9.9")
    assert main_container(pinned)["image"] == f"kai-gitops@{digest}"  # the digest wins over the tag


def test_another_release_name_and_namespace_keep_every_reference_whole() -> None:
    """Names follow the release; each binding's subject is the ServiceAccount the CronJob runs as, each roleRef a
    role of the chart, each ConfigMap the job reads one the chart renders, and the Lease in the release namespace."""
    objects = template(*chart_values("selfHeal", COMPONENTS), release="gitops", namespace="platform")
    names = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects}
    pod = pod_spec(objects)
    assert ("ServiceAccount", "platform", pod["serviceAccountName"]) in names
    assert pod["serviceAccountName"] == "gitops-kai-gitops"
    for binding in (o for o in objects if o["kind"].endswith("Binding")):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gitops-kai-gitops", "namespace": "platform"}]
        scope = binding["metadata"].get("namespace") if binding["roleRef"]["kind"] == "Role" else None
        assert (binding["roleRef"]["kind"], scope, binding["roleRef"]["name"]) in names
    maps = {
        e["valueFrom"]["configMapKeyRef"]["name"]
        for e in main_container(objects)["env"]
        if "configMapKeyRef" in e.get("valueFrom", {})
    }
    assert {("ConfigMap", "platform", name) for name in maps} <= names
    assert "--lease-namespace=platform" in main_container(objects)["args"]
    assert ("Role", "platform", "gitops-kai-gitops-lease") in names
    assert ("Namespace", None, "platform") in names


def test_chart_metadata_is_what_chart_testing_reads() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2" and chart["type"] == "application"
    assert chart["appVersion"] == package_version("kai-gitops")  # the image tag it defaults to
    assert {"name", "version", "description", "kubeVersion", "home", "sources", "maintainers", "annotations"} <= set(
        chart
    )
    assert chart["kubeVersion"] == ">=1.29.0-0"  # native sidecars (the OPA component)
    assert main_container(template())["image"] == f"kai-gitops:{chart['appVersion']}"


def test_the_schema_is_strict_everywhere_and_every_value_has_a_default() -> None:
    """Every object of the schema refuses unknown keys (a typo fails the install instead of being ignored), and every
    top-level value is required and has its default in values.yaml (helm lint checks values.yaml against it)."""
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    schema = json.loads((CHART / "values.schema.json").read_text())

    def objects(node: Any) -> list[Obj]:
        if isinstance(node, dict):
            own = [node] if node.get("type") == "object" else []
            return own + [o for child in node.values() for o in objects(child)]
        return [o for child in node for o in objects(child)] if isinstance(node, list) else []

    assert all(o.get("additionalProperties") is False for o in objects(schema))
    assert set(schema["required"]) == set(schema["properties"]) == set(values)


@pytest.mark.parametrize("mode", MODES)
def test_no_credential_or_repository_url_in_the_rendered_objects_or_the_values(mode: str) -> None:
    """As for deploy/ (tests/deploy/test_deploy_manifests.py): only the pod's own sidecar and an in-cluster Service
    default; no Secret is rendered, the Git one is named and created by the operator."""
    objects = template(*chart_values(mode, COMPONENTS))
    texts = [yaml.safe_dump(objects), (CHART / "values.yaml").read_text()]
    for text in texts:
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        assert not re.search(r"https?://(?!127\.0\.0\.1[:/]|[a-z0-9-]+\.[a-z0-9-]+\.svc:)", text)
    assert not [o for o in objects if o["kind"] == "Secret"]


def test_the_deployment_page_documents_every_value() -> None:
    """docs/deployment.md#install-with-helm: a row names each value (its leaves, resources as one)."""
    page = (ROOT / "docs" / "deployment.md").read_text()
    section = page.split("## Install with Helm\n", 1)[1].split("\n### ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]

    def leaves(node: Any, prefix: str) -> list[str]:
        if not isinstance(node, dict) or prefix.endswith("resources"):
            return [prefix]
        return [leaf for key, value in node.items() for leaf in leaves(value, f"{prefix}.{key}" if prefix else key)]

    values = yaml.safe_load((CHART / "values.yaml").read_text())
    missing = [leaf for leaf in leaves(values, "") if not any(f"`{leaf}`" in row for row in rows)]
    assert not missing


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ([], "settings.cluster is required"),
        (["--set", "image.repository=registry.local/kai-gitops"], "settings.cluster is required"),
        (["--set", "settings.cluster=lab"], "image.repository is required"),
    ],
)
def test_an_install_without_its_cluster_or_registry_says_which_set_to_give(given: list[str], missing: str) -> None:
    """values.yaml names no cluster and no registry: the demo's `prod-addon` and a bare `kai-gitops` image were
    installed as they stood. Helm's error names the value and the --set that gives it."""
    done = helm("template", RELEASE, str(CHART), "--namespace", NAMESPACE, *given)
    assert done.returncode != 0
    assert missing in done.stderr and "--set " in done.stderr.split(missing, 1)[1].splitlines()[0], done.stderr


def test_self_heal_gets_the_git_host_token_for_rollout_waves_only_when_named() -> None:
    def token_env(*args: str) -> list[Any]:
        return [e for e in main_container(template(*args))["env"] if e["name"] == "KAI_GITOPS_GIT_HOST_TOKEN"]

    named = ("--set", "selfHeal.gitHostTokenSecret=gh-statuses")
    assert token_env("--set", "mode=selfHeal", *named) == [
        {"name": "KAI_GITOPS_GIT_HOST_TOKEN", "valueFrom": {"secretKeyRef": {"name": "gh-statuses", "key": "token"}}}
    ]
    assert token_env("--set", "mode=selfHeal") == [] and token_env("--set", "mode=reportOnly", *named) == []
