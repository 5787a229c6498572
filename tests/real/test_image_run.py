"""The image itself: the Helm-installed CronJob's command run inside the built image, read-only root, as the
chart's ServiceAccount, against the real API server.

The image is built without a Docker engine by tools/image_without_docker.sh (debootstrap base, buildah, chroot
isolation) into podman's store; that build takes minutes and Debian packages, so it is not part of `make test`:
this test runs when the image is there and skips, saying how to build it, when it is not (also under CI=true --
the image is an opt-in check; tests/deploy/test_image.py keeps the Dockerfile's promises on every run).

The pod's restrictions are podman's: --read-only (no tmpfs of its own), the two emptyDir mounts as tmpfs, all
capabilities dropped, no-new-privileges, the image's numeric user. The Git remote is a file:// bare clone
mounted read-only and owned by the image's user (libgit2 refuses a repository another user owns). The image is
the one the script last built: rebuild it after changing the code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from importlib.metadata import version as package_version
from pathlib import Path

import pytest

from tests.support.demo_cluster import nvca_agent, populate
from tests.support.deploy_cronjob_run import container_env, expand
from tests.support.deploy_helm_chart import CHART
from tests.support.deploy_manifests import main_container
from tests.support.envtest import EnvTest, running_server
from tests.support.helpers import make_bare_remote
from tests.support.real_deploy_rbac import CLUSTER_WIDE_SECRET_LIST, DEMO, GIT_TOKEN, audited, wait_for_grants
from tests.support.real_helm_install import NAMESPACE, RELEASE, SA_USER, helm, installed_objects

IMAGE = f"localhost/kai-gitops:{package_version('kai-gitops')}"
UID = "65532"
PROBE = (
    "import os\nfor path in ('/usr/local/probe', '/etc/probe', '/tmp/probe', '/var/cache/kai-gitops/probe'):\n"
    "    try:\n        open(path, 'w').close(); print(path, 'written')\n"
    "    except OSError as error: print(path, error.strerror)\nprint('uid', os.getuid())\n"
)


def _missing() -> str | None:
    """Why the image cannot run here, or None. Decided at collection, so no server starts for a skipped test."""
    if os.geteuid() != 0:
        return "needs root: the image is in root's podman store, and the clone is handed to the image's user"
    found = shutil.which("podman")
    if found is None or shutil.which("runc") is None:
        return "podman and runc are not installed (see tools/image_without_docker.sh)"
    if subprocess.run([found, "image", "exists", IMAGE], capture_output=True, timeout=60).returncode != 0:
        return f"no image {IMAGE} in podman's store: build it with tools/image_without_docker.sh"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def pod_like(command: str, mounts: list[str], volumes: dict[Path, str], env: dict[str, str]) -> list[str]:
    return [
        command,
        "run",
        "--rm",
        "--runtime",
        "runc",
        "--network",
        "host",
        "--read-only",
        "--read-only-tmpfs=false",
        "--cap-drop=ALL",
        "--security-opt",
        "no-new-privileges",
        "--ulimit",
        "nofile=20000:20000",
        "--ulimit",
        "nproc=4096:4096",  # podman's defaults exceed the VM's
        *[arg for mount in mounts for arg in ("--tmpfs", f"{mount}:rw,size=256m,mode=1777")],
        *[arg for host, inside in volumes.items() for arg in ("-v", f"{host}:{inside}:ro")],
        *[arg for name, value in env.items() for arg in ("-e", f"{name}={value}")],
    ]


@pytest.fixture(scope="module")
def cluster() -> Iterator[EnvTest]:
    """A server of its own: the authorizer's answer to each request of the image's run is read from its log."""
    yield from running_server(("helm",))


def test_the_installed_cronjob_command_runs_in_the_image_with_a_read_only_root(
    cluster: EnvTest, tmp_path: Path
) -> None:
    command = shutil.which("podman") or "podman"
    cluster.reset()
    populate(cluster, DEMO.prod_addon_snapshot())
    tmp_path.chmod(0o755)
    with nvca_agent(cluster):
        helm(cluster, tmp_path, "install", RELEASE, str(CHART), "--namespace", NAMESPACE, "--create-namespace")
        objects = installed_objects(cluster, tmp_path)
        with cluster.api_client() as admin:
            wait_for_grants(admin, SA_USER, objects)
        token = cluster.service_account_token(NAMESPACE, RELEASE, create=False)
        kubeconfig = cluster.write_kubeconfig(tmp_path / "token.kubeconfig", token=token, context="prod", user=SA_USER)
        kubeconfig.chmod(0o644)
        DEMO.build_repo(tmp_path / "repo")
        remote = make_bare_remote(tmp_path, tmp_path / "repo")
        subprocess.run(["chown", "-R", f"{UID}:{UID}", str(remote)], check=True)
        container = main_container(objects)
        mounts = [m["mountPath"] for m in container["volumeMounts"]]
        env = container_env(objects, {"url": "file:///repo.git", "token": GIT_TOKEN}, {m: Path(m) for m in mounts})
        pod = pod_like(
            command,
            mounts,
            {kubeconfig: "/var/run/kai/kubeconfig", remote: "/repo.git"},
            {**env, "KUBECONFIG": "/var/run/kai/kubeconfig"},
        )
        mark = cluster.audit_offset()
        done = subprocess.run(
            [*pod, IMAGE, *expand(container["args"], env)], capture_output=True, text=True, timeout=300
        )
        requests = audited(cluster, mark)
        probe = subprocess.run(
            [*pod, "--entrypoint", "python", IMAGE, "-c", PROBE], capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 2, done.stderr  # the demo's error-level findings remain
    assert json.loads(done.stdout)["cluster"] == "prod-addon"
    assert "error" not in [json.loads(line)["level"] for line in done.stderr.splitlines() if line.startswith("{")]
    assert requests and {(r.verb, r.group, r.resource, r.namespace) for r in requests if r.code in (401, 403)} == {
        CLUSTER_WIDE_SECRET_LIST
    }
    assert probe.stdout.splitlines() == [
        "/usr/local/probe Read-only file system",
        "/etc/probe Read-only file system",
        "/tmp/probe written",
        "/var/cache/kai-gitops/probe written",
        f"uid {UID}",
    ]
