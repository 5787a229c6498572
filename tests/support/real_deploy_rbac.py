"""Shared helpers of tests/real/test_deploy_rbac.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes

from tests.support.envtest import EnvTest
from tests.support.helpers import load_demo_builder

Obj = dict[str, Any]

DEMO = load_demo_builder()

NAMESPACE = SERVICE_ACCOUNT = "kai-gitops"

SA_USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"

GIT_TOKEN = "glpat-PLANTEDdeployTOKEN0123456789"

_REASON = re.compile(r'allowed by (?:Cluster)?RoleBinding "([^"/]+)(?:/[^"]+)?" of (?:Cluster)?Role "([^"]+)"')

_NAMED = {"services/proxy"}  # a proxy's "name" is the Service and port: what its resourceNames restrict


@dataclass(frozen=True)
class Request:
    """One request of the ServiceAccount, from the audit log."""

    verb: str
    group: str
    resource: str  # with its subresource: services/proxy
    namespace: str | None
    name: str | None
    code: int
    allowed_by: str | None  # the role whose rule the authorizer used; None when refused or not RBAC's

    @classmethod
    def from_event(cls, event: Obj) -> Request | None:
        ref = event.get("objectRef")
        if ref is None or not ref.get("resource"):
            return None  # discovery (/api, /apis/...): every authenticated user may read it
        resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        found = _REASON.search(event.get("annotations", {}).get("authorization.k8s.io/reason", ""))
        role = found.group(2) if found and found.group(2).startswith("kai-gitops") else None
        return cls(
            event["verb"],
            ref.get("apiGroup", ""),
            resource,
            ref.get("namespace"),
            ref.get("name"),
            event["responseStatus"]["code"],
            role,
        )

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """A matrix row: the name only where resourceNames can restrict the verb and the tool uses the name
        (reads, updates and deletes of single objects, the proxy); creates of report objects are one row."""
        name = self.name if self.verb in ("get", "patch", "update", "delete") or self.resource in _NAMED else None
        return self.verb, self.group, self.resource, self.namespace or "", name or ""


@dataclass
class Run:
    label: str
    code: int
    stdout: str
    stderr: str
    requests: list[Request] = field(default_factory=list)

    def report(self) -> Obj:
        return json.loads(self.stdout)


def bound_rules(objects: list[Obj]) -> list[tuple[str | None, str, Obj]]:
    """(namespace of a Role, or None; role name; rule) of every rule bound to the ServiceAccount."""
    roles = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in ("Role", "ClusterRole")
    }
    rules = []
    for binding in (o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        assert [(s["kind"], s["namespace"]) for s in binding["subjects"]] == [("ServiceAccount", NAMESPACE)]
        namespace, ref = binding["metadata"].get("namespace"), binding["roleRef"]
        role = roles[ref["kind"], namespace if ref["kind"] == "Role" else None, ref["name"]]
        rules += [(namespace, ref["name"], rule) for rule in role["rules"]]
    return rules


def grants(objects: list[Obj]) -> list[tuple[str | None, str, str, str, str, str | None]]:
    """Every rule expanded: (namespace, role, verb, group, resource, resourceName or None)."""
    return [
        (namespace, role, verb, group, resource, name)
        for namespace, role, rule in bound_rules(objects)
        for verb in rule["verbs"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for name in rule.get("resourceNames") or [None]
    ]


def access_review(
    client: Any, user: str, verb: str, group: str, resource: str, namespace: str | None, name: str | None
) -> bool:
    """The real authorizer's answer for ServiceAccount ``user`` (SubjectAccessReview, asked as the admin)."""
    plural, _, subresource = resource.partition("/")
    attributes = {
        "verb": verb,
        "group": group,
        "resource": plural,
        "subresource": subresource,
        "namespace": namespace or "",
        "name": name or "",
    }
    review = kubernetes.client.AuthorizationV1Api(client).create_subject_access_review(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}", "system:authenticated"],
                "resourceAttributes": attributes,
            },
        }
    )
    return bool(review.status.allowed)


def wait_for_grants(client: Any, user: str, objects: list[Obj]) -> None:
    """The RBAC authorizer reads roles through informers: wait until it grants every rendered rule."""
    deadline = time.monotonic() + 15
    pending = grants(objects)
    while pending:
        pending = [g for g in pending if not access_review(client, user, *g[2:5], g[0], g[5])]
        if pending and time.monotonic() > deadline:
            raise AssertionError(f"the authorizer never granted {pending}")
        time.sleep(0.05 if pending else 0)


REPORT_PLURALS = {
    "PolicyReport": "policyreports",
    "ClusterPolicyReport": "clusterpolicyreports",
    "Report": "reports",
    "ClusterReport": "clusterreports",
}


def kai_gitops() -> list[str]:
    script = Path(sys.executable).parent / "kai-gitops"
    return [str(script)] if script.exists() else [sys.executable, "-m", "reconciler"]


def run_as_pod(
    cluster: EnvTest, args: list[str], env: dict[str, str], kubeconfig: Path, label: str, *, cwd: Path
) -> Run:
    """The container's command as a process of its own, and the requests its identity made meanwhile."""
    mark = cluster.audit_offset()
    done = subprocess.run(
        [*kai_gitops(), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **env, "KUBECONFIG": str(kubeconfig)},
    )
    run = Run(label, done.returncode, done.stdout, done.stderr)
    run.requests = audited(cluster, mark)
    return run


def audited(cluster: EnvTest, mark: int) -> list[Request]:
    events = [e for e in cluster.audit_events(mark) if e["user"]["username"] == SA_USER]
    return [r for r in map(Request.from_event, events) if r is not None]


CLUSTER_WIDE_SECRET_LIST = ("list", "", "secrets", None)
