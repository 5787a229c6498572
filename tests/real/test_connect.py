"""Connecting to a real API server the ways operators' kubeconfigs and pods do, with the installed
``kai-gitops`` in a process of its own: the CA as a file or as data, a client certificate as files or as
data, a bearer token, a token file (``tokenFile``), an exec credential plugin (a script written here that
prints an ExecCredential), and the in-cluster service account (``KUBERNETES_SERVICE_HOST``/``_PORT``, the
token and ``ca.crt`` in a folder). Each runs `kai-gitops doctor` on the demo cluster; a wrong CA, or an
exec plugin that fails, is one error line and exit 1.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.support.demo_cluster import populate
from tests.support.envtest import EnvTest
from tests.support.envtest._pki import generate
from tests.support.helpers import load_demo_builder
from tests.support.real_connect import kai_gitops

Obj = dict[str, Any]
DEMO = load_demo_builder()
READER = ("connect", "reader")  # a ServiceAccount bound to ClusterRole view-all below
EXEC_PLUGIN = """import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
assert info["kind"] == "ExecCredential", info
with open(sys.argv[1]) as token:
    print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                      "status": {"token": token.read().strip()}}))
"""


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig(path: Path, server: str, cluster: Obj, user: Obj) -> Path:
    """A kubeconfig whose context is the demo repository's kubeContext for prod-addon."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "prod",
        "clusters": [{"name": "envtest", "cluster": {"server": server, **cluster}}],
        "contexts": [{"name": "prod", "context": {"cluster": "envtest", "user": "someone"}}],
        "users": [{"name": "someone", "user": user}],
    }
    path.write_text(yaml.safe_dump(config))
    return path


def reader_token(envtest: EnvTest) -> str:
    """A ServiceAccount token that may read everything the reader reads (Secrets too), and nothing else."""
    assert envtest.rest is not None
    envtest.rest.call(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "view-all"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list"]}],
        },
        ok=(201, 409),
    )
    envtest.rest.call(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "connect-reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view-all"},
            "subjects": [{"kind": "ServiceAccount", "namespace": READER[0], "name": READER[1]}],
        },
        ok=(201, 409),
    )
    return envtest.service_account_token(*READER)


# Each case: (envtest, tmp) -> (extra environment, kubeconfig or None for in-cluster)
Case = Callable[[EnvTest, Path], tuple[dict[str, str], Path | None]]


def ca_file_and_client_cert_files(envtest: EnvTest, tmp: Path) -> tuple[dict[str, str], Path | None]:
    pki = envtest.pki
    return {}, kubeconfig(
        tmp / "config",
        envtest.url,
        {"certificate-authority": str(pki.ca_cert)},
        {"client-certificate": str(pki.admin_cert), "client-key": str(pki.admin_key)},
    )


def ca_data_and_client_cert_data(envtest: EnvTest, tmp: Path) -> tuple[dict[str, str], Path | None]:
    pki = envtest.pki
    return {}, kubeconfig(
        tmp / "config",
        envtest.url,
        {"certificate-authority-data": b64(pki.ca_cert)},
        {"client-certificate-data": b64(pki.admin_cert), "client-key-data": b64(pki.admin_key)},
    )


def bearer_token(envtest: EnvTest, tmp: Path) -> tuple[dict[str, str], Path | None]:
    return {}, kubeconfig(
        tmp / "config",
        envtest.url,
        {"certificate-authority-data": b64(envtest.pki.ca_cert)},
        {"token": reader_token(envtest)},
    )


def token_file(envtest: EnvTest, tmp: Path) -> tuple[dict[str, str], Path | None]:
    (tmp / "token").write_text(reader_token(envtest))
    return {}, kubeconfig(
        tmp / "config",
        envtest.url,
        {"certificate-authority": str(envtest.pki.ca_cert)},
        {"tokenFile": str(tmp / "token")},
    )


def exec_plugin(envtest: EnvTest, tmp: Path) -> tuple[dict[str, str], Path | None]:
    (tmp / "token").write_text(reader_token(envtest))
    (tmp / "plugin.py").write_text(EXEC_PLUGIN)
    return {}, kubeconfig(
        tmp / "config",
        envtest.url,
        {"certificate-authority-data": b64(envtest.pki.ca_cert)},
        {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "interactiveMode": "Never",
                "command": sys.executable,
                "args": [str(tmp / "plugin.py"), str(tmp / "token")],
            }
        },
    )


def in_cluster(envtest: EnvTest, tmp: Path) -> tuple[dict[str, str], Path | None]:
    """What the kubelet gives a pod: the Service's host and port in the environment, the projected token and
    the cluster CA in the service-account folder (here a temp dir, named by KAI_GITOPS_SERVICE_ACCOUNT_DIR)."""
    folder = tmp / "serviceaccount"
    folder.mkdir()
    (folder / "token").write_text(reader_token(envtest))
    (folder / "ca.crt").write_bytes(envtest.pki.ca_cert.read_bytes())
    (folder / "namespace").write_text(READER[0])
    address = urlsplit(envtest.url)
    return {
        "KUBERNETES_SERVICE_HOST": str(address.hostname),
        "KUBERNETES_SERVICE_PORT": str(address.port),
        "KAI_GITOPS_SERVICE_ACCOUNT_DIR": str(folder),
    }, None


CASES: dict[str, Case] = {
    f.__name__.replace("_", "-"): f
    for f in (
        ca_file_and_client_cert_files,
        ca_data_and_client_cert_data,
        bearer_token,
        token_file,
        exec_plugin,
        in_cluster,
    )
}


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    return repo


@pytest.mark.parametrize("case", CASES)
def test_doctor_connects(envtest: EnvTest, tmp_path: Path, demo_repo: Path, case: str) -> None:
    populate(envtest, DEMO.prod_addon_snapshot())
    env, config = CASES[case](envtest, tmp_path)
    args = ["doctor", "--repo", str(demo_repo), "--cluster", "prod-addon", "-o", "json", "--log-format", "text"]
    if config is not None:
        args += ["--kubeconfig", str(config)]
    done = kai_gitops(args, env, tmp_path)
    assert done.returncode == 2, done.stderr  # read, checked: the demo's findings remain
    assert done.stderr == ""
    report = json.loads(done.stdout)
    assert report["live"]["source"] == (
        "live cluster (in-cluster)" if config is None else "live cluster (context prod)"
    )
    rules = {f["rule"] for f in report["findings"]}
    assert {"KAI-D-002", "KAI-R-011"} <= rules  # quota-0 queues and the second KAI release: the cluster was read


@pytest.mark.parametrize("where", ["kubeconfig", "in-cluster"])
def test_a_wrong_ca_is_one_error_line(envtest: EnvTest, tmp_path: Path, demo_repo: Path, where: str) -> None:
    other = generate(tmp_path / "other-pki").ca_cert
    args = ["doctor", "--repo", str(demo_repo), "--cluster", "prod-addon", "--log-format", "text"]
    if where == "kubeconfig":
        config = kubeconfig(
            tmp_path / "config",
            envtest.url,
            {"certificate-authority": str(other)},
            {"client-certificate": str(envtest.pki.admin_cert), "client-key": str(envtest.pki.admin_key)},
        )
        env: dict[str, str] = {}
        args += ["--kubeconfig", str(config)]
    else:
        env, _ = in_cluster(envtest, tmp_path)
        (Path(env["KAI_GITOPS_SERVICE_ACCOUNT_DIR"]) / "ca.crt").write_bytes(other.read_bytes())
    done = kai_gitops(args, env, tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kai-gitops: error: ") and "Traceback" not in done.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in lines[0] or "certificate verify failed" in lines[0], lines[0]


@pytest.mark.parametrize(
    ("plugin", "says"),
    [
        (
            "import sys; sys.stderr.write('session expired, run: corp-login\\n'); sys.exit(1)",
            "exec: process returned 1. session expired, run: corp-login",
        ),
        ("print('not an ExecCredential')", "exec: failed to decode process output"),
        (None, "No such file or directory"),
    ],
    ids=["exits-1", "prints-garbage", "missing"],
)
def test_a_failing_exec_plugin_is_one_error_line_not_an_anonymous_run(
    envtest: EnvTest, tmp_path: Path, demo_repo: Path, plugin: str | None, says: str
) -> None:
    """The kubernetes client only logs a failed plugin and sends the requests without credentials; the real
    server then refuses system:anonymous (the stand-in, which authenticates nobody, answered them)."""
    script = tmp_path / "plugin.py"
    if plugin is not None:
        script.write_text(plugin)
    command = [sys.executable, str(script)] if plugin is not None else [str(tmp_path / "no-such-plugin")]
    config = kubeconfig(
        tmp_path / "config",
        envtest.url,
        {"certificate-authority": str(envtest.pki.ca_cert)},
        {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "interactiveMode": "Never",
                "command": command[0],
                "args": command[1:],
            }
        },
    )
    done = kai_gitops(
        [
            "doctor",
            "--repo",
            str(demo_repo),
            "--cluster",
            "prod-addon",
            "--kubeconfig",
            str(config),
            "--log-format",
            "text",
        ],
        {},
        tmp_path,
    )
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"kai-gitops: error: {config}: cannot use kube context 'prod': "), lines[0]
    assert says in done.stderr and "anonymous" not in done.stderr


def test_a_snapshot_of_the_real_cluster_tells_diff_what_the_cluster_does(
    envtest: EnvTest, tmp_path: Path, demo_repo: Path
) -> None:
    """`kai-gitops snapshot` reads the real API server (paged lists, discovery, the release Secret), and `diff
    --snapshot` of that file finds what `diff` finds live; the Secret's payload never reaches the file."""
    populate(envtest, DEMO.prod_addon_snapshot())
    assert envtest.kubeconfig is not None
    live = ["--kubeconfig", str(envtest.kubeconfig)]
    snapshot = tmp_path / "snap.yaml"
    made = kai_gitops(["snapshot", "-o", str(snapshot), *live], {"KAI_GITOPS_LOG_FORMAT": "text"}, tmp_path)
    assert made.returncode == 0, made.stderr
    diff = ["diff", "--repo", str(demo_repo), "--cluster", "prod-addon", "-o", "json", "--log-format", "text"]
    from_live = kai_gitops([*diff, *live, "--context", "envtest"], {}, tmp_path)
    from_file = kai_gitops([*diff, "--snapshot", str(snapshot)], {}, tmp_path)
    assert from_live.returncode == from_file.returncode == 2, (from_live.stderr, from_file.stderr)

    def findings(out: str) -> list[tuple[str, str, str]]:
        return sorted((f["rule"], str(f.get("subject")), f["message"]) for f in json.loads(out)["findings"])

    assert {"KAI-D-002", "KAI-R-011"} <= {rule for rule, _, _ in findings(from_live.stdout)}
    assert findings(from_file.stdout) == findings(from_live.stdout)
    text = snapshot.read_text()
    kinds = {item["kind"] for item in yaml.safe_load(text)["items"]}
    assert "Secret" not in kinds and "HelmReleaseSummary" in kinds  # the releases only as redacted summaries
    payloads = [
        value for item in DEMO.prod_addon_snapshot() if item["kind"] == "Secret" for value in item["data"].values()
    ]  # release payloads and a registry credential
    assert payloads and not any(payload[:40] in text for payload in payloads)


def test_a_snapshot_names_the_real_cluster_and_check_holds_it_to_its_pin(
    envtest: EnvTest, tmp_path: Path, demo_repo: Path
) -> None:
    """The List annotation kai-gitops.io/cluster-uid is the real kube-system namespace's UID; `check
    --live-snapshot` judges the snapshot for the cluster pinned to that UID and refuses it for another."""
    from tests.support.helpers import commit_files

    populate(envtest, DEMO.prod_addon_snapshot())
    assert envtest.kubeconfig is not None and envtest.rest is not None
    uid = envtest.rest.get("/api/v1/namespaces/kube-system")["metadata"]["uid"]
    snapshot = tmp_path / "snap.json"
    made = kai_gitops(["snapshot", "-o", str(snapshot), "--kubeconfig", str(envtest.kubeconfig)], {}, tmp_path)
    assert made.returncode == 0, made.stderr
    assert json.loads(snapshot.read_text())["metadata"]["annotations"]["kai-gitops.io/cluster-uid"] == uid
    config = (demo_repo / "kai-gitops.yaml").read_text()
    check = ["check", "--repo", str(demo_repo), "--live-snapshot", f"prod-addon={snapshot}", "-o", "json"]
    for pin, refused in ((uid, False), ("0b7e5f1d-aaaa-4bbb-8ccc-123456789abc", True)):
        commit_files(
            demo_repo,
            {
                "kai-gitops.yaml": config.replace(
                    "  - name: prod-addon\n", f"  - name: prod-addon\n    clusterUID: {pin}\n"
                )
            },
        )
        done = kai_gitops(check, {}, tmp_path)
        if refused:
            assert done.returncode == 1 and "the snapshot is of another cluster" in done.stderr, done.stderr
        else:
            assert done.returncode in (0, 2) and "warning" not in done.stderr, done.stderr


def test_the_identity_a_pod_runs_as_is_its_tokens_authenticated_user(
    envtest: EnvTest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real ServiceAccount token (TokenRequest): the username the audit log names its writes by."""
    from reconciler.sources.cluster.kubeconfig import service_account_user

    env, _ = in_cluster(envtest, tmp_path)
    monkeypatch.setenv("KAI_GITOPS_SERVICE_ACCOUNT_DIR", env["KAI_GITOPS_SERVICE_ACCOUNT_DIR"])
    assert service_account_user() == f"system:serviceaccount:{READER[0]}:{READER[1]}"
