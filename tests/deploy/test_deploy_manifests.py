"""deploy/: every overlay, with and without each component, renders and validates against Kubernetes' schemas.

Rendering is tests/support/kustomize.py (Kustomize's rules for what deploy/ uses; see its docstring);
where `kubectl kustomize` exists, the same variants are rendered with it too and must give the same
objects. Validation is kubernetes-validate, strict (unknown fields are errors), against Kubernetes 1.29
(the oldest with native sidecars, which the OPA component uses) and the newest schema it ships.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from importlib.metadata import version as package_version
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner

from reconciler.cli import main
from tests.support.deploy_manifests import (
    COMPONENTS,
    DEPLOY,
    K8S_VERSIONS,
    Obj,
    by_kind,
    cronjob,
    main_container,
    pod_spec,
    rendered,
    variant_dir,
)
from tests.support.kustomize import identity, render
from tests.support.tools import require_tool

OVERLAYS = ("report-only", "self-heal")
VARIANTS = (
    [(o, ()) for o in OVERLAYS]
    + [(o, (c,)) for o in OVERLAYS for c in COMPONENTS]
    + [(o, COMPONENTS) for o in OVERLAYS]
)


def _kubectl_kustomize() -> str | None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    probe = subprocess.run([kubectl, "kustomize", "--help"], capture_output=True, timeout=30)
    return kubectl if probe.returncode == 0 else None


@pytest.mark.parametrize(("overlay", "components"), VARIANTS)
def test_renderer_agrees_with_kubectl_kustomize(tmp_path: Path, overlay: str, components: tuple[str, ...]) -> None:
    kubectl = _kubectl_kustomize()
    if kubectl is None:
        pytest.skip("no `kubectl kustomize` on this machine; the renderer's docstring says what it implements")
    directory = variant_dir(tmp_path, overlay, components)
    out = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    theirs = {identity(o): o for o in yaml.safe_load_all(out.stdout) if o}
    ours = {identity(o): o for o in render(directory)}
    assert sorted(ours) == sorted(theirs)
    assert ours == theirs


@pytest.mark.parametrize(("overlay", "components"), VARIANTS)
def test_every_manifest_validates_against_the_kubernetes_schemas(
    tmp_path: Path, overlay: str, components: tuple[str, ...]
) -> None:
    objects = rendered(tmp_path, overlay, components)
    assert objects
    for obj in objects:
        for version in K8S_VERSIONS:
            key = (version, json.dumps(obj, sort_keys=True))
            if key in _VALID:
                continue  # the same object in another variant: each schema load costs ~0.1 s
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                path = ".".join(str(p) for p in exc.path)
                pytest.fail(f"{identity(obj)} against {version}: {path}: {exc.message}")
            _VALID.add(key)


_VALID: set[tuple[str, str]] = set()


def test_the_objects_of_each_overlay(tmp_path: Path) -> None:
    """The list the README and the closing note show; a new object must be a deliberate change here."""
    base = {
        ("v1", "Namespace", "", "kai-gitops"),
        ("v1", "ServiceAccount", "kai-gitops", "kai-gitops"),
        ("v1", "ConfigMap", "kai-gitops", "kai-gitops-settings"),
        ("batch/v1", "CronJob", "kai-gitops", "kai-gitops"),
        *{
            ("rbac.authorization.k8s.io/v1", kind, "", "kai-gitops-read")
            for kind in ("ClusterRole", "ClusterRoleBinding")
        },
        *{
            ("rbac.authorization.k8s.io/v1", kind, "kai-scheduler", "kai-gitops-read-releases")
            for kind in ("Role", "RoleBinding")
        },
        *{
            ("rbac.authorization.k8s.io/v1", kind, "nvca-operator", "kai-gitops-read-dto")
            for kind in ("Role", "RoleBinding")
        },
        *{
            ("rbac.authorization.k8s.io/v1", kind, "nvca-system", "kai-gitops-read-healthz")
            for kind in ("Role", "RoleBinding")
        },
        *{
            ("rbac.authorization.k8s.io/v1", kind, "", "kai-gitops-report")
            for kind in ("ClusterRole", "ClusterRoleBinding")
        },
    }
    fixer = {
        *{
            ("rbac.authorization.k8s.io/v1", kind, "", "kai-gitops-fixer")
            for kind in ("ClusterRole", "ClusterRoleBinding")
        },
        *{("rbac.authorization.k8s.io/v1", kind, "kai-gitops", "kai-gitops-lease") for kind in ("Role", "RoleBinding")},
        *{("rbac.authorization.k8s.io/v1", kind, "default", "kai-gitops-events") for kind in ("Role", "RoleBinding")},
        ("v1", "PersistentVolumeClaim", "kai-gitops", "kai-gitops-state"),
    }  # the runs' audit log
    assert {identity(o) for o in rendered(tmp_path, "report-only")} == base
    assert {identity(o) for o in rendered(tmp_path, "self-heal")} == base | fixer
    wide = {identity(o) for o in rendered(tmp_path, "report-only", ("cluster-wide-releases",))}
    assert wide - base == {
        ("rbac.authorization.k8s.io/v1", kind, "", "kai-gitops-read-all-releases")
        for kind in ("ClusterRole", "ClusterRoleBinding")
    }


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_cronjob_is_bounded_and_hardened(tmp_path: Path, overlay: str) -> None:
    objects = rendered(tmp_path, overlay, ("opa-sidecar",))
    spec = cronjob(objects)["spec"]
    assert spec["concurrencyPolicy"] == "Forbid"
    assert spec["startingDeadlineSeconds"] > 0
    assert spec["successfulJobsHistoryLimit"] >= 1 and spec["failedJobsHistoryLimit"] >= 1
    assert spec["jobTemplate"]["spec"]["activeDeadlineSeconds"] > 0
    assert spec["jobTemplate"]["spec"]["backoffLimit"] == 0
    pod = pod_spec(objects)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in pod["containers"] + pod.get("initContainers", []):
        sc = container["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False, container["name"]
        assert sc["readOnlyRootFilesystem"] is True, container["name"]
        assert sc["capabilities"] == {"drop": ["ALL"]}, container["name"]
        assert container["resources"]["requests"] and container["resources"]["limits"]["memory"], container["name"]
    emptydirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    mounts = {m["mountPath"]: m["name"] for m in main_container(objects)["volumeMounts"]}
    env = {e["name"]: e for e in main_container(objects)["env"]}
    # Every path the tool writes is on an emptyDir: the clone cache, HOME and the temp dir.
    for variable in ("KAI_GITOPS_CACHE", "HOME", "TMPDIR"):
        assert mounts.get(env[variable]["value"]) in emptydirs, variable
    assert env["KAI_GITOPS_REPO_URL"]["valueFrom"]["secretKeyRef"]["name"] == "kai-gitops-git"
    assert env["KAI_GITOPS_GIT_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "kai-gitops-git"
    assert "--repo=$(KAI_GITOPS_REPO_URL)" in main_container(objects)["args"]
    assert main_container(objects)["image"] == f"kai-gitops:{package_version('kai-gitops')}"


def test_no_credential_or_repository_url_in_any_manifest() -> None:
    # The Kustomize tree; the Helm chart's rendered objects are checked in tests/deploy/test_helm_chart.py.
    for path in (p for tree in ("base", "overlays", "components") for p in (DEPLOY / tree).rglob("*.yaml")):
        text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
        # only the pod's own sidecar and in-cluster service defaults: no repository or external URL
        assert not re.search(r"https?://(?!127\.0\.0\.1[:/]|[a-z0-9-]+\.[a-z0-9-]+\.svc:)", text), path
        assert not by_kind([d for d in yaml.safe_load_all(text) if isinstance(d, dict) and "kind" in d], "Secret")


def test_opa_sidecar_serves_the_bundle_the_job_queries(tmp_path: Path) -> None:
    objects = rendered(tmp_path, "report-only", ("opa-sidecar",))
    pod = pod_spec(objects)
    (opa,) = pod["initContainers"]
    assert opa["restartPolicy"] == "Always"  # a native sidecar: the Job completes when the job exits
    bundle = opa["args"][opa["args"].index("--bundle") + 1]
    (mount,) = [m for m in opa["volumeMounts"] if bundle.startswith(m["mountPath"] + "/")]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == "kai-gitops-opa-bundle"
    assert bundle.removeprefix(mount["mountPath"] + "/") == "bundle.tar.gz"  # the key --from-file gives
    args = main_container(objects)["args"]
    assert "--opa-url=http://127.0.0.1:8181" in args and "--opa-preloaded" in args
    assert "--opa-url" not in " ".join(main_container(rendered(tmp_path, "report-only"))["args"])


_FLAG = re.compile(r"^(--[a-z][a-z0-9-]*)")


def help_flags(command: list[str]) -> set[str]:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0, result.output
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", result.output))


@pytest.mark.parametrize(("overlay", "components"), VARIANTS)
def test_every_flag_in_the_manifests_exists(tmp_path: Path, overlay: str, components: tuple[str, ...]) -> None:
    args = main_container(rendered(tmp_path, overlay, components))["args"]
    command = [a for a in args if not a.startswith("-")]
    assert command and all(args.index(c) < len(command) for c in command), args  # subcommand(s) first
    known = help_flags(command)
    used = {m.group(1) for a in args if (m := _FLAG.match(a))}
    assert used and used <= known, used - known


@pytest.mark.parametrize(
    ("kustomization", "error"),
    [
        ({"namespace": "x", "resources": ["r.yaml"]}, "does not implement: ['namespace']"),
        (
            {
                "resources": ["r.yaml"],
                "patches": [{"patch": "metadata: {labels: {a: b}}", "target": {"kind": "ConfigMap"}}],
            },
            "strategic-merge patches are not implemented",
        ),
        ({"resources": ["r.yaml"], "patches": [{"patch": "[]", "target": {"kind": "Secret"}}]}, "matches no resource"),
        ({"resources": ["r.yaml", "r.yaml"]}, "already registered id"),
    ],
)
def test_renderer_refuses_what_it_does_not_implement(tmp_path: Path, kustomization: Obj, error: str) -> None:
    from tests.support.kustomize import KustomizeError

    (tmp_path / "r.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n")
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    with pytest.raises(KustomizeError, match=re.escape(error)):
        render(tmp_path)


@pytest.mark.parametrize(("overlay", "components"), VARIANTS)
def test_every_variable_and_config_key_the_job_uses_is_defined(
    tmp_path: Path, overlay: str, components: tuple[str, ...]
) -> None:
    """The kubelet leaves an undefined $(VAR) in args as is, and a missing ConfigMap key stops the pod."""
    objects = rendered(tmp_path, overlay, components)
    container = main_container(objects)
    env = {e["name"]: e for e in container["env"]}
    for arg in container["args"]:
        for name in re.findall(r"\$\(([A-Z0-9_]+)\)", arg):
            assert name in env, (arg, name)
    (settings,) = [o for o in by_kind(objects, "ConfigMap") if o["metadata"]["name"] == "kai-gitops-settings"]
    for item in env.values():
        source = item.get("valueFrom", {})
        if "configMapKeyRef" in source:
            ref = source["configMapKeyRef"]
            assert ref["name"] == "kai-gitops-settings" and ref["key"] in settings["data"], item
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            # the one Secret an operator must create; any other is optional
            assert (ref["name"], ref["key"]) in {("kai-gitops-git", "url"), ("kai-gitops-git", "token")} or ref.get(
                "optional"
            ) is True, item
    pushes = [a for a in container["args"] if a.startswith("--metrics-push=")]
    assert bool(pushes) == ("metrics-push" in components)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_probe_is_reachable_by_the_kubelet(tmp_path: Path, overlay: str) -> None:
    """The kubelet probes from the node: a probe of a loopback host, or of a port served only on loopback, never
    succeeds, and a failing startup probe of a native sidecar keeps the job's container from ever starting."""
    pod = pod_spec(rendered(tmp_path, overlay, COMPONENTS))
    probed = 0
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        loopback = {
            int(m.group(1))
            for a in container.get("args", [])
            if (m := re.search(r"(?:127\.0\.0\.1|localhost):(\d+)$", a))
        }
        for key in ("startupProbe", "readinessProbe", "livenessProbe"):
            if (check := (container.get(key) or {}).get("httpGet")) is None:
                continue
            probed += 1
            assert check.get("host") in (None, ""), (container["name"], key, check)
            assert check["port"] not in loopback, (container["name"], key, check, sorted(loopback))
    assert probed


@pytest.mark.parametrize(("overlay", "components"), VARIANTS)
def test_the_container_args_parse_as_the_cli_would(tmp_path: Path, overlay: str, components: tuple[str, ...]) -> None:
    """Beyond flag names: click parses the whole argument list (values of choices like --fail-on, --log-format
    and -o, repeated options, flags given a value), with each $(VAR) standing for a value the kubelet expands."""
    import click

    from tests.support.audit_log import KAI_GITOPS, QUEUES, START, request, write_log

    mounted = tmp_path / "kubernetes-audit"  # the audit-log component's volume, as the kubelet mounts it
    mounted.mkdir()
    write_log(mounted / "audit.log", request(KAI_GITOPS, "update", QUEUES, "default-queue", START))
    args = [
        re.sub(r"\$\(\w+\)", "x", a).replace("/var/log/kubernetes-audit", str(mounted))
        for a in main_container(rendered(tmp_path, overlay, components))["args"]
    ]
    parent = main.make_context("kai-gitops", list(args))
    command = main.get_command(parent, args[0])
    assert command is not None, args
    try:
        command.make_context(args[0], args[1:], parent=parent)
    except click.UsageError as exc:
        pytest.fail(f"{overlay}+{components}: {exc.format_message()}")


@pytest.mark.parametrize(("overlay", "components"), VARIANTS)
def test_an_images_override_in_the_users_overlay_sets_the_image(
    tmp_path: Path, overlay: str, components: tuple[str, ...]
) -> None:
    """What docs/deployment.md tells users to write. Kustomize matches `images:` by the name the manifests carry
    after the base and overlays: a base that renamed the image to a registry path made `name: kai-gitops`
    match nothing, silently (real `kubectl kustomize`, and the test renderer, which must agree)."""
    kubectl = require_tool("kubectl")
    directory = variant_dir(tmp_path, overlay, components)
    user = tmp_path / "user"
    user.mkdir()
    (user / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(directory, user)],
                "images": [
                    {"name": "kai-gitops", "newName": "registry.example.com/platform/kai-gitops", "newTag": "9.9.9"}
                ],
            }
        )
    )
    out = subprocess.run([str(kubectl), "kustomize", str(user)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    theirs = [o for o in yaml.safe_load_all(out.stdout) if o]
    for objects in (theirs, render(user)):
        assert main_container(objects)["image"] == "registry.example.com/platform/kai-gitops:9.9.9"
        others = [c["image"] for c in pod_spec(objects).get("initContainers", [])]
        assert all(image.startswith("openpolicyagent/opa:") for image in others), others


def test_the_shipped_job_fails_on_errors_only(tmp_path: Path) -> None:
    """The hourly Job is an alert: a failed Job means the run failed or an error-level finding remains; a warning
    (a Pending pod, NVCA-P-003) is in the report, the PolicyReports and the metrics, not a red Job every hour."""
    for overlay in OVERLAYS:
        args = main_container(rendered(tmp_path, overlay))["args"]
        assert [a for a in args if a.startswith("--fail-on")] == ["--fail-on=error"], (overlay, args)


def test_the_my_cluster_example_names_your_cluster_and_registry() -> None:
    """deploy/examples/my-cluster, as a user copies it: the base alone pulls a bare `kai-gitops` image and checks the
    demo's cluster; the example overlay sets the registry and the cluster (rendered as `kubectl apply -k` would)."""
    example = DEPLOY / "examples" / "my-cluster"
    objects = render(example)
    (job,) = [o for o in objects if o["kind"] == "CronJob"]
    containers = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert containers[0]["image"] == "<your-registry>/kai-gitops:<your-tag>"
    (settings,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "kai-gitops-settings"]
    assert settings["data"]["cluster"] == "<your-cluster>"
    (role,) = [o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == "kai-gitops-report"]
    names = {name for rule in role["rules"] for name in rule.get("resourceNames", ())}
    assert names == {"kai-gitops-<your-cluster>"}, names  # the reports of the cluster it checks, no other
    kubectl = _kubectl_kustomize()
    if kubectl:
        out = subprocess.run([kubectl, "kustomize", str(example)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert {identity(o): o for o in yaml.safe_load_all(out.stdout) if o} == {identity(o): o for o in objects}
