"""etcd + kube-apiserver on loopback, the product's CRDs installed, and a reset between tests."""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from tests.support import tools

from . import _pki
from ._rest import ApiError, RestClient

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# The CRDs the product reads or writes: KAI (Queue, PodGroup, Topology, SchedulingShard, Config), NVCA's
# NVCFBackend, and the PolicyReport / OpenReports kinds the report writer targets.
DEFAULT_CRD_FILES = (
    *sorted((FIXTURES / "kai").glob("*.yaml")),
    FIXTURES / "nvcf" / "nvcfbackends.nvcf.nvidia.io-crd.yaml",
    *sorted((FIXTURES / "reports").glob("*.yaml")),
)
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
DATA_PREFIX = "kai-gitops-envtest-"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
START_TIMEOUT = float(os.environ.get("KAI_GITOPS_ENVTEST_START_TIMEOUT", "120"))
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
AGGREGATED_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
DELETE_OPTIONS = {
    "apiVersion": "v1",
    "kind": "DeleteOptions",
    "propagationPolicy": "Background",
    "gracePeriodSeconds": 0,
}
MERGE_PATCH = "application/merge-patch+json"
# Deleted first: a webhook or admission policy a test left behind could block every later request.
ADMISSION_GROUP = "admissionregistration.k8s.io"
# Every request at level Metadata (who, verb, object, status, the authorizer's decision and reason), once
# answered: what a test needs to see which request each RBAC rule served, without the bodies.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived", "ResponseStarted", "Panic"],
    "rules": [{"level": "Metadata"}],
}
AUDIT_MARKER = "/api/v1/namespaces/kai-gitops-envtest-audit-mark-"


class EnvTestError(RuntimeError):
    pass


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def base(self) -> str:
        return f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        path = self.base
        if namespace:
            path += f"/namespaces/{quote(namespace, safe='')}"
        path += f"/{self.plural}"
        if name:
            path += f"/{quote(name, safe='')}"
        return path


@dataclass
class _Baseline:
    namespaces: dict[str, str] = field(default_factory=dict)  # name -> uid
    uids: set[str] = field(default_factory=set)  # every object present when the server came up
    crds: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> the installed manifest
    crd_generations: dict[str, int] = field(default_factory=dict)


@dataclass
class ResetReport:
    deleted: list[str] = field(default_factory=list)  # "resource[/namespace]/name"
    restored_crds: list[str] = field(default_factory=list)
    seconds: float = 0.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


try:  # looked up here, not in the child: between fork and exec the child should do as little as possible
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL it when the process that started it dies (even by SIGKILL).
    Linux ties this to the starting *thread*: start the server from a thread that lives as long as it."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"({path.name}: no log)"
    return "\n".join([f"--- last {min(lines, len(text))} lines of {path.name}:", *text[-lines:]])


def reap_stale_data_dirs() -> None:
    """Remove data dirs of earlier runs whose owner process is gone (killed with SIGKILL, say)."""
    for directory in Path(tempfile.gettempdir()).glob(DATA_PREFIX + "*"):
        try:
            pid = int((directory / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(directory, ignore_errors=True)
        except PermissionError:
            pass


def load_crds(files: Iterable[Path]) -> list[dict[str, Any]]:
    crds = []
    for path in files:
        for document in yaml.safe_load_all(Path(path).read_text()):
            if document and document.get("kind") == "CustomResourceDefinition":
                crds.append(document)
    return crds


class EnvTest:
    """A real API server for tests: etcd and kube-apiserver on free 127.0.0.1 ports, TLS with a per-run CA,
    RBAC, TokenRequest, the product's CRDs. Use as a context manager or call start()/stop().

    With ``audit=True`` the API server writes an audit log of every request (level Metadata, JSON lines);
    read it with ``audit_events()``."""

    def __init__(
        self,
        *,
        crd_files: Iterable[Path] = DEFAULT_CRD_FILES,
        extra_apiserver_args: Iterable[str] = (),
        extra_etcd_args: Iterable[str] = (),
        audit: bool = False,
    ):
        self.crd_manifests = load_crds(crd_files)
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.extra_etcd_args = list(extra_etcd_args)
        self.audit = audit
        self.data_dir: Path | None = None
        self.pki: _pki.Pki | None = None
        self.url = ""
        self.etcd_url = ""  # its client URL: for tests that act on the store itself (e.g. compact its history)
        self.kubeconfig: Path | None = None
        self.kube_system_uid = ""
        self.startup: dict[str, float] = {}
        self.rest: RestClient | None = None
        self._processes: dict[str, subprocess.Popen] = {}
        self._logs: dict[str, Path] = {}
        self._baseline = _Baseline()
        self._stopped = False

    # -- lifecycle --------------------------------------------------------------------------------------

    def __enter__(self) -> EnvTest:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> EnvTest:
        if self.data_dir is not None:
            raise EnvTestError("an EnvTest starts once; make a new one")
        etcd, apiserver = tools.tool_path("etcd"), tools.tool_path("kube-apiserver")
        began = time.monotonic()
        reap_stale_data_dirs()
        self.data_dir = Path(tempfile.mkdtemp(prefix=DATA_PREFIX))
        (self.data_dir / "owner.pid").write_text(str(os.getpid()))
        atexit.register(self.stop)
        try:
            self.pki = _pki.generate(self.data_dir / "pki")
            for attempt in range(3):  # a port another process took between our probe and the bind: new ports
                try:
                    self._launch(etcd, apiserver)
                    break
                except _PortTaken:
                    self._kill_all()
                    if attempt == 2:
                        raise
            self.startup["apiserver_ready"] = time.monotonic() - began
            self._wait_for_kube_system()
            mark = time.monotonic()
            self._install_crds(self.crd_manifests)
            self.startup["crds"] = time.monotonic() - mark
            self._take_baseline()
            self.kubeconfig = self.write_kubeconfig(self.data_dir / "admin.kubeconfig")
        except BaseException:
            self.stop()
            raise
        self.startup["total"] = time.monotonic() - began
        return self

    def _launch(self, etcd: Path, apiserver: Path) -> None:
        assert self.data_dir is not None and self.pki is not None
        client_port, peer_port, secure_port = free_port(), free_port(), free_port()
        etcd_url, peer_url = f"http://127.0.0.1:{client_port}", f"http://127.0.0.1:{peer_port}"
        self.etcd_url = etcd_url
        self.url = f"https://127.0.0.1:{secure_port}"
        shutil.rmtree(self.data_dir / "etcd", ignore_errors=True)
        self._spawn(
            "etcd",
            [
                str(etcd),
                "--name=envtest",
                f"--data-dir={self.data_dir / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=envtest={peer_url}",
                "--initial-cluster-state=new",
                "--unsafe-no-fsync",  # a throw-away store: fsync only slows every write down
                "--log-level=warn",
                *self.extra_etcd_args,
            ],
        )
        pki = self.pki
        # Both start at once: kube-apiserver spends its first second building its handlers anyway and
        # retries etcd until it answers.
        self._spawn(
            "kube-apiserver",
            [
                str(apiserver),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                f"--secure-port={secure_port}",
                "--advertise-address=127.0.0.1",
                f"--cert-dir={pki.ca_cert.parent}",
                f"--tls-cert-file={pki.serving_cert}",
                f"--tls-private-key-file={pki.serving_key}",
                f"--client-ca-file={pki.ca_cert}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
                f"--service-account-key-file={pki.sa_public}",
                f"--service-account-signing-key-file={pki.sa_key}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--allow-privileged=true",
                "--profiling=false",
                *self._audit_args(),
                *self.extra_apiserver_args,
            ],
        )
        self.rest = RestClient(self.url, str(pki.ca_cert), str(pki.admin_cert), str(pki.admin_key), timeout=10)
        self._wait(lambda: self._etcd_healthy(etcd_url), "etcd to answer /health")
        self._wait(self._apiserver_ready, "kube-apiserver /readyz")

    def _audit_args(self) -> list[str]:
        if not self.audit:
            return []
        assert self.data_dir is not None
        policy = self.data_dir / "audit-policy.yaml"
        policy.write_text(yaml.safe_dump(AUDIT_POLICY))
        # blocking: an event is written before its request's handler returns, so none is dropped under load
        return [
            f"--audit-policy-file={policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
        ]

    @property
    def audit_log(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir / "audit.log"

    def audit_offset(self) -> int:
        """Where the audit log ends now: pass it to ``audit_events(since=...)`` to see only what follows."""
        return self.audit_log.stat().st_size if self.audit_log.exists() else 0

    def audit_events(self, since: int = 0, *, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The audit events logged after byte offset ``since``, including every request answered before this
        call: a marker request is made and the log read once the marker is in it (an event is written as its
        request completes, so an answered request's event can trail its answer by a moment)."""
        if not self.audit:
            raise EnvTestError("this EnvTest was started without audit=True")
        assert self.rest is not None
        marker = AUDIT_MARKER + uuid.uuid4().hex
        self.rest.raw("GET", marker)
        deadline = time.monotonic() + timeout
        while True:
            with open(self.audit_log, "rb") as log:
                log.seek(since)
                lines = log.read().splitlines()
            # Lines up to the marker's are whole; a line after it may still be being written.
            end = next((i for i, line in enumerate(lines) if marker.encode() in line), None)
            if end is not None:
                events = [json.loads(line) for line in lines[:end] if line.strip()]
                return [e for e in events if not e.get("requestURI", "").startswith(AUDIT_MARKER)]
            if time.monotonic() > deadline:
                raise EnvTestError(f"the audit marker {marker} did not reach {self.audit_log} in {timeout:.0f}s")
            time.sleep(0.02)

    def _spawn(self, name: str, command: list[str]) -> None:
        assert self.data_dir is not None
        log_path = self._logs[name] = self.data_dir / f"{name}.log"
        with open(log_path, "ab") as log:
            log.write(f"$ {' '.join(command)}\n".encode())
            log.flush()
            self._processes[name] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                start_new_session=True,  # its own process group: stop() kills the whole group
                preexec_fn=_die_with_parent,
            )

    def _etcd_healthy(self, url: str) -> bool:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                return json.loads(answer.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def _apiserver_ready(self) -> bool:
        assert self.rest is not None
        try:
            status, _ = self.rest.raw("GET", "/readyz")
        except (OSError, ValueError):
            self.rest.close()
            return False
        return status == 200

    def _wait(self, ready, what: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for name, process in self._processes.items():
                if process.poll() is not None:
                    logs = self.log_tails()
                    if "address already in use" in logs:
                        raise _PortTaken(logs)
                    raise EnvTestError(f"{name} exited with {process.returncode} while waiting for {what}\n{logs}")
            if ready():
                return
            if time.monotonic() > deadline:
                raise EnvTestError(f"timed out after {timeout:.0f}s waiting for {what}\n{self.log_tails()}")
            time.sleep(0.05)

    def log_tails(self, lines: int = 40) -> str:
        return "\n".join(_tail(path, lines) for path in self._logs.values())

    def _wait_for_kube_system(self) -> None:
        """The API server's own bootstrap controller creates default, kube-system, kube-public and
        kube-node-lease; the product binds plans to kube-system's UID, so it must be there before tests."""

        def present() -> bool:
            status, body = self.rest.raw("GET", "/api/v1/namespaces/kube-system")
            if status == 200:
                self.kube_system_uid = body["metadata"]["uid"]
                return True
            return False

        self._wait(present, "the kube-system namespace")

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd, and remove the data dir. Idempotent; also runs at exit."""
        if self._stopped:
            return
        self._stopped = True
        if self.rest is not None:
            self.rest.close()
        self._kill_all()
        if self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)

    def _kill_all(self) -> None:
        for name in ("kube-apiserver", "etcd"):
            process = self._processes.pop(name, None)
            if process is None:
                continue
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
                try:
                    process.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._processes.clear()

    # -- clients and credentials ----------------------------------------------------------------------

    def write_kubeconfig(
        self,
        path: Path | str,
        *,
        token: str | None = None,
        cert: Path | None = None,
        key: Path | None = None,
        context: str = "envtest",
        user: str = "admin",
    ) -> Path:
        """A kubeconfig for this server (CA data embedded): with ``token`` for that bearer token, with
        ``cert``/``key`` for that client certificate, else as the admin (O=system:masters)."""
        assert self.pki is not None
        if token is not None:
            credentials: dict[str, str] = {"token": token}
        else:
            cert, key = cert or self.pki.admin_cert, key or self.pki.admin_key
            credentials = {"client-certificate-data": _b64(Path(cert)), "client-key-data": _b64(Path(key))}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": context,
            "clusters": [
                {"name": context, "cluster": {"server": self.url, "certificate-authority-data": _b64(self.pki.ca_cert)}}
            ],
            "contexts": [{"name": context, "context": {"cluster": context, "user": user}}],
            "users": [{"name": user, "user": credentials}],
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.touch(mode=0o600)
        tmp.write_text(yaml.safe_dump(config, sort_keys=False))
        os.replace(tmp, path)
        return path

    def api_client(self, *, token: str | None = None):
        """A ``kubernetes.client.ApiClient`` for this server: admin (client certificate) or ``token``."""
        import kubernetes.client

        assert self.pki is not None
        configuration = kubernetes.client.Configuration(host=self.url)
        configuration.ssl_ca_cert = str(self.pki.ca_cert)
        if token is None:
            configuration.cert_file, configuration.key_file = str(self.pki.admin_cert), str(self.pki.admin_key)
        else:
            configuration.api_key = {"authorization": f"Bearer {token}"}
        return kubernetes.client.ApiClient(configuration)

    def service_account_token(
        self,
        namespace: str,
        name: str,
        *,
        create: bool = True,
        audiences: list[str] | None = None,
        expiration_seconds: int = 3600,
    ) -> str:
        """A token for ServiceAccount ``namespace/name`` from the TokenRequest API (the ServiceAccount,
        and with ``create`` its namespace, are created when missing)."""
        assert self.rest is not None
        if create:
            self.create_namespace(namespace, exist_ok=True)
            self.rest.call(
                "POST",
                f"/api/v1/namespaces/{namespace}/serviceaccounts",
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
                ok=(201, 409),
            )
        spec: dict[str, Any] = {"expirationSeconds": expiration_seconds}
        if audiences is not None:
            spec["audiences"] = audiences
        answer = self.rest.call(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
        )
        return answer["status"]["token"]

    def create_namespace(
        self, name: str, *, labels: dict[str, str] | None = None, exist_ok: bool = False
    ) -> dict[str, Any]:
        """Create a namespace the way a cluster's controllers would leave it: with its ``default``
        ServiceAccount (Pods cannot be created without it) and the ``kube-root-ca.crt`` ConfigMap."""
        assert self.rest is not None and self.pki is not None
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}
        status, answer = self.rest.raw("POST", "/api/v1/namespaces", body)
        if status == 409 and exist_ok:
            return self.rest.get(f"/api/v1/namespaces/{name}")
        if status != 201:
            raise ApiError("POST", "/api/v1/namespaces", status, answer)
        self.rest.call(
            "POST",
            f"/api/v1/namespaces/{name}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
            ok=(201, 409),
        )
        self.rest.call(
            "POST",
            f"/api/v1/namespaces/{name}/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "kube-root-ca.crt"},
                "data": {"ca.crt": self.pki.ca_cert.read_text()},
            },
            ok=(201, 409),
        )
        return answer

    # -- CRDs -------------------------------------------------------------------------------------------

    def _install_crds(self, manifests: list[dict[str, Any]]) -> None:
        assert self.rest is not None
        path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        for manifest in manifests:
            self.rest.call("POST", path, manifest, ok=(201,))
        for manifest in manifests:
            self._wait(
                lambda m=manifest: self._crd_served(m), f"CRD {manifest['metadata']['name']} Established", timeout=60
            )

    def _crd_served(self, manifest: dict[str, Any]) -> bool:
        """Established, and its resource listed in discovery (what clients check before using a kind)."""
        name = manifest["metadata"]["name"]
        status, crd = self.rest.raw("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        if status != 200:
            return False
        conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
        if conditions.get("Established") != "True":
            return False
        spec = crd["spec"]
        served = next(v["name"] for v in spec["versions"] if v.get("served", True))
        status, discovery = self.rest.raw("GET", f"/apis/{spec['group']}/{served}")
        return status == 200 and any(r["name"] == spec["names"]["plural"] for r in discovery.get("resources") or [])

    # -- reset between tests ----------------------------------------------------------------------------

    def discover(self) -> list[Resource]:
        """Every listable, deletable resource, each once, in the most preferred version serving it
        (aggregated discovery; a group's kinds need not share a version: KAI's Queue is v2, PodGroup
        v2alpha2)."""
        assert self.rest is not None
        resources: dict[tuple[str, str], Resource] = {}
        for prefix in ("/api", "/apis"):
            for group in self.rest.get(prefix, accept=AGGREGATED_DISCOVERY)["items"]:
                name = group["metadata"].get("name", "")
                for version in group.get("versions") or []:  # listed in preference order
                    for entry in version.get("resources") or []:
                        verbs = set(entry.get("verbs") or [])
                        if {"list", "delete"} <= verbs and (name, entry["resource"]) not in resources:
                            resources[name, entry["resource"]] = Resource(
                                name, version["version"], entry["resource"], entry.get("scope") == "Namespaced"
                            )
        return list(resources.values())

    def _objects(self, resources: list[Resource]) -> list[tuple[Resource, dict[str, Any]]]:
        def listing(resource: Resource) -> list[tuple[Resource, dict[str, Any]]]:
            found, token = [], ""
            while True:
                query = "?limit=500" + (f"&continue={quote(token)}" if token else "")
                status, body = self.rest.raw("GET", resource.path() + query, accept=PARTIAL_LIST)
                if status in (404, 405):  # gone since discovery (a CRD deleted meanwhile)
                    return found
                if status != 200:
                    raise ApiError("GET", resource.path(), status, body)
                found += [(resource, item["metadata"]) for item in body.get("items") or []]
                token = body.get("metadata", {}).get("continue")
                if not token:
                    return found

        with ThreadPoolExecutor(max_workers=6) as pool:
            return [pair for chunk in pool.map(listing, resources) for pair in chunk]

    def _take_baseline(self) -> None:
        assert self.rest is not None
        resources = self.discover()
        baseline = _Baseline()
        for _resource, meta in self._objects(resources):
            baseline.uids.add(meta["uid"])
        for name in SYSTEM_NAMESPACES:
            baseline.namespaces[name] = self.rest.get(f"/api/v1/namespaces/{name}")["metadata"]["uid"]
        for manifest in self.crd_manifests:
            name = manifest["metadata"]["name"]
            live = self.rest.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            baseline.crds[name] = manifest
            baseline.crd_generations[name] = live["metadata"]["generation"]
        self._baseline = baseline

    def reset(self) -> ResetReport:
        """Remove what tests created since the server came up: every namespace but the system ones (with
        everything in them), objects created in the system namespaces, custom objects of every CRD,
        cluster-scoped objects (Nodes, ClusterRoles, webhooks, CRDs, ...) and finalizers in the way; and
        re-install the product's CRDs if a test deleted or changed one. Objects the API server creates for
        itself are kept. Changes made to objects that existed at start (e.g. labels on kube-system) are
        not reverted."""
        assert self.rest is not None
        began = time.monotonic()
        report = ResetReport()
        baseline = self._baseline
        resources = [r for r in self.discover() if not (r.group == "" and r.plural == "namespaces")]
        doomed: dict[str, tuple[Resource, dict[str, Any]]] = {}
        for resource, meta in self._objects(resources):
            if meta["uid"] in baseline.uids or meta["uid"] in doomed:
                continue  # present at start; or the same object seen through a second API (events)
            namespace = meta.get("namespace")
            in_system = namespace is None or baseline.namespaces.get(namespace)
            if in_system and _made_by_apiserver(meta):
                continue
            if _phase(resource) == 2 and meta["name"] in baseline.crds:
                continue  # the product's CRDs: re-installed below if deleted or changed, never removed
            doomed[meta["uid"]] = (resource, meta)
        phases: list[list[tuple[Resource, dict[str, Any]]]] = [[], [], []]
        for resource, meta in doomed.values():
            phases[_phase(resource)].append((resource, meta))
        with ThreadPoolExecutor(max_workers=6) as pool:
            for batch in phases:
                report.deleted += [d for d in pool.map(lambda pair: self._delete(*pair), batch) if d]
        for name, meta in self._test_namespaces():
            self._delete_namespace(name, meta)
            report.deleted.append(f"namespaces/{name}")
        crds = phases[2]
        self._wait(
            lambda: all(self.rest.raw("GET", r.path(name=m["name"]))[0] == 404 for r, m in crds),
            "deleted CRDs to be gone",
            timeout=60,
        )
        report.restored_crds = self._restore_crds()
        report.seconds = time.monotonic() - began
        return report

    def _delete(self, resource: Resource, meta: dict[str, Any]) -> str | None:
        path = resource.path(meta.get("namespace"), meta["name"])
        if meta.get("finalizers"):
            self.rest.call("PATCH", path, {"metadata": {"finalizers": None}}, content_type=MERGE_PATCH, ok=(200, 404))
        status, body = self.rest.raw("DELETE", path, DELETE_OPTIONS)
        if status == 404:
            return None
        if status not in (200, 202):
            raise ApiError("DELETE", path, status, body)
        if status == 202 or (isinstance(body, dict) and body.get("metadata", {}).get("finalizers")):
            # Finalizers added on the way out (e.g. orphan/foreground): no controller will remove them.
            self.rest.call("PATCH", path, {"metadata": {"finalizers": None}}, content_type=MERGE_PATCH, ok=(200, 404))
        return "/".join(p for p in (resource.plural, meta.get("namespace"), meta["name"]) if p)

    def _test_namespaces(self) -> list[tuple[str, dict[str, Any]]]:
        listed = self.rest.get("/api/v1/namespaces", accept=PARTIAL_LIST)["items"]
        return [
            (item["metadata"]["name"], item["metadata"])
            for item in listed
            if self._baseline.namespaces.get(item["metadata"]["name"]) != item["metadata"]["uid"]
        ]

    def _delete_namespace(self, name: str, meta: dict[str, Any]) -> None:
        """What the namespace controller would do once the contents are gone (reset deleted them first):
        clear the ``kubernetes`` finalizer through the finalize subresource so the deletion completes."""
        path = f"/api/v1/namespaces/{quote(name, safe='')}"
        if meta.get("finalizers"):
            self.rest.call("PATCH", path, {"metadata": {"finalizers": None}}, content_type=MERGE_PATCH, ok=(200, 404))
        self.rest.call("DELETE", path, DELETE_OPTIONS, ok=(200, 202, 404))
        status, live = self.rest.raw("GET", path)
        if status == 404:
            return
        live["spec"]["finalizers"] = []
        self.rest.call("PUT", path + "/finalize", live, ok=(200, 404, 409))
        self._wait(lambda: self.rest.raw("GET", path)[0] == 404, f"namespace {name} to be deleted", timeout=30)

    def _restore_crds(self) -> list[str]:
        restored = []
        for name, manifest in self._baseline.crds.items():
            path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
            status, live = self.rest.raw("GET", path)
            if status == 200 and live["metadata"].get("deletionTimestamp"):
                # A test deleted it: the API server removes its objects, then the CRD; then re-create it.
                self._wait(
                    lambda p=path: self.rest.raw("GET", p)[0] == 404, f"deleted CRD {name} to be gone", timeout=60
                )
                status = 404
            elif status == 200 and live["metadata"]["generation"] == self._baseline.crd_generations[name]:
                continue
            if status == 200:
                body = dict(
                    manifest, metadata=dict(manifest["metadata"], resourceVersion=live["metadata"]["resourceVersion"])
                )
                self.rest.call("PUT", path, body)
            else:
                self.rest.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", manifest, ok=(201,))
            self._wait(lambda m=manifest: self._crd_served(m), f"CRD {name} Established", timeout=60)
            live = self.rest.get(path)
            self._baseline.crd_generations[name] = live["metadata"]["generation"]
            self._baseline.uids.add(live["metadata"]["uid"])
            restored.append(name)
        return restored


class _PortTaken(EnvTestError):
    pass


def _phase(resource: Resource) -> int:
    """Deletion order: admission webhooks and policies (they could block the rest), everything else, CRDs
    (their custom objects are gone by then)."""
    if resource.group == ADMISSION_GROUP:
        return 0
    return 2 if resource.group == "apiextensions.k8s.io" and resource.plural == "customresourcedefinitions" else 1


def _made_by_apiserver(meta: dict[str, Any]) -> bool:
    managers = {entry.get("manager") for entry in meta.get("managedFields") or []}
    return bool(managers) and managers <= {"kube-apiserver"}


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()
