"""Kubernetes audit logs as the API server's log backend writes them: one compact `audit.k8s.io/v1` Event per line
(https://kubernetes.io/docs/reference/config-api/apiserver-audit.v1/), each request once at RequestReceived and
once at ResponseComplete, with the identities a cluster running KAI really has: a person with kubectl, the KAI
operator's ServiceAccount, the API server itself, kai-gitops, Helm; reads and forbidden writes around them.
"""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

QUEUES = ("scheduling.run.ai", "v2", "queues")
CONFIGS = ("kai.scheduler", "v1", "configs")
START = datetime(2026, 11, 30, 13, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Writer:
    username: str
    groups: tuple[str, ...]
    user_agent: str
    source_ip: str
    impersonates: str | None = None
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))


PERSON = Writer(
    "alice@example.com",
    ("oidc:platform-admins", "system:authenticated"),
    "kubectl/v1.36.0 (linux/amd64) kubernetes/0b3f2e1",
    "10.0.0.7",
)
OPERATOR = Writer(
    "system:serviceaccount:kai-scheduler:kai-operator",
    ("system:serviceaccounts", "system:serviceaccounts:kai-scheduler", "system:authenticated"),
    "operator/v0.16.7 (linux/amd64) kubernetes/$Format",
    "10.244.0.12",
)
APISERVER = Writer(
    "system:apiserver",
    ("system:authenticated", "system:masters"),
    "kube-apiserver/v1.36.0 (linux/amd64) kubernetes/0b3f2e1",
    "::1",
)
KAI_GITOPS = Writer(
    "system:serviceaccount:kai-gitops:kai-gitops",
    ("system:serviceaccounts", "system:serviceaccounts:kai-gitops", "system:authenticated"),
    "kai-gitops/0.1 (reconciler)",
    "10.244.0.31",
)
HELM = Writer(
    "system:serviceaccount:ci:deployer", ("system:serviceaccounts", "system:authenticated"), "Helm/3.19.0", "10.0.3.3"
)  # a CI job's ServiceAccount running helm: a person's change until kai-gitops.yaml names it
HELM_BY_HAND = Writer(
    "alice@example.com", ("oidc:platform-admins", "system:authenticated"), "Helm/3.16.0", "10.0.0.7"
)  # a person running helm (or `curl -A 'Helm/3.16.0'`): still a person
SCHEDULER = Writer(
    "system:serviceaccount:kai-scheduler:queue-controller",
    ("system:serviceaccounts", "system:authenticated"),
    "queue-controller/v0.16.7",
    "10.244.0.14",
)
MALLORY = Writer("mallory@example.com", ("system:authenticated",), "kubectl/v1.36.0 (linux/amd64)", "10.0.0.66")


def event(
    writer: Writer,
    verb: str,
    resource: tuple[str, str, str],
    name: str,
    at: datetime,
    *,
    stage: str = "ResponseComplete",
    code: int = 200,
    namespace: str | None = None,
    subresource: str | None = None,
    audit_id: str | None = None,
) -> dict[str, Any]:
    group, version, plural = resource
    scope = f"/namespaces/{namespace}" if namespace else ""
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    uri = f"{base}{scope}/{plural}/{name}" + (f"/{subresource}" if subresource else "")
    ref: dict[str, Any] = {"resource": plural, "name": name, "apiVersion": version}
    if group:
        ref["apiGroup"] = group
    if namespace:
        ref["namespace"] = namespace
    if subresource:
        ref["subresource"] = subresource
    user: dict[str, Any] = {"username": writer.username, "uid": writer.uid, "groups": list(writer.groups)}
    out: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id or str(uuid.uuid4()),
        "stage": stage,
        "requestURI": uri + ("?fieldManager=kubectl-edit" if verb == "update" else ""),
        "verb": verb,
        "user": user,
        "sourceIPs": [writer.source_ip],
        "userAgent": writer.user_agent,
        "objectRef": ref,
        "requestReceivedTimestamp": _stamp(at),
        "stageTimestamp": _stamp(at + timedelta(milliseconds=4)),
        "annotations": {
            "authorization.k8s.io/decision": "allow" if code != 403 else "forbid",
            "authorization.k8s.io/reason": "",
        },
    }
    if writer.impersonates:
        user["groups"] = ["system:masters", "system:authenticated"]
        out["impersonatedUser"] = {"username": writer.impersonates, "groups": ["system:authenticated"]}
    if stage != "RequestReceived":
        out["responseStatus"] = (
            {"metadata": {}, "code": code}
            if code < 400
            else {
                "metadata": {},
                "status": "Failure",
                "reason": "Forbidden",
                "code": code,
                "message": f'{plural}.{group} "{name}" is forbidden',
            }
        )
    return out


def request(
    writer: Writer, verb: str, resource: tuple[str, str, str], name: str, at: datetime, **kwargs: Any
) -> list[dict[str, Any]]:
    """Both events the log backend writes for one request, sharing its auditID."""
    audit_id = str(uuid.uuid4())
    received = event(writer, verb, resource, name, at, stage="RequestReceived", audit_id=audit_id, **kwargs)
    return [received, event(writer, verb, resource, name, at, audit_id=audit_id, **kwargs)]


def story(queue: str = "default-queue") -> Iterator[dict[str, Any]]:
    """The day of a queue: created by Helm, kept by the operator and the API server, read by everyone, and last
    edited by a person with kubectl; then a forbidden edit and a status update, which change nothing."""
    at = START
    steps: list[tuple[Writer, str, dict[str, Any]]] = [
        (HELM, "create", {}),
        (OPERATOR, "update", {}),
        (APISERVER, "patch", {}),
        (KAI_GITOPS, "get", {}),
        (KAI_GITOPS, "patch", {}),
        (OPERATOR, "get", {}),
        (PERSON, "get", {}),
        (PERSON, "update", {}),
        (MALLORY, "update", {"code": 403}),
        (SCHEDULER, "update", {"subresource": "status"}),
        (OPERATOR, "list", {}),
        (KAI_GITOPS, "get", {}),
    ]
    for writer, verb, extra in steps:
        at += timedelta(minutes=7)
        yield from request(writer, verb, QUEUES, queue, at, **extra)


def line(value: dict[str, Any]) -> bytes:
    """As Go's encoding/json writes it: compact, one line."""
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def write_log(path: Path, events: Iterator[dict[str, Any]] | list[dict[str, Any]], *, compress: bool = False) -> Path:
    data = b"".join(line(e) for e in events)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def write_noise_log(
    path: Path, target_bytes: int, *, queue: str = "default-queue", hot: bool = False, compress: bool = False
) -> int:
    """A large log: the story of `queue` at its end, behind `target_bytes` of traffic written a line at a time
    (reads, watches and writes by the operator, the API server, kai-gitops and the queue controller). The traffic
    is about 500 other queues and leases, or with `hot` all about `queue` itself (every line must then be
    parsed). Returns the number of lines."""
    names = [queue] if hot else [f"team-{i:04d}" for i in range(500)]
    at, count, size = START - timedelta(days=3), 0, 0
    with gzip.open(path, "wb", compresslevel=1) if compress else path.open("wb") as out:
        while size < target_bytes:
            at += timedelta(milliseconds=100)
            writer = (OPERATOR, APISERVER, KAI_GITOPS, SCHEDULER)[count % 4]
            verb = ("get", "update", "watch", "patch", "list")[count % 5]
            resource = QUEUES if count % 3 or hot else ("coordination.k8s.io", "v1", "leases")
            namespace = "kai-scheduler" if resource is not QUEUES else None
            data = line(event(writer, verb, resource, names[count % len(names)], at, namespace=namespace))
            out.write(data)
            size += len(data)
            count += 1
        for e in story(queue):
            out.write(line(e))
            count += 1
    return count


def _stamp(at: datetime) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds, in UTC."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
