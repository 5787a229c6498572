"""Each drift finding's `lastWrite`: its object's last successful write in the cluster's audit logs, before the
live state was read (a snapshot: when it was taken), with the writer's identity classed as a person, the
system or a GitOps tool (`audit.identities`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CONFIG_MAP, KAI_AND_NVCA, NODE, SECRET, Resource
from reconciler.findings.age import format_instant
from reconciler.findings.finding import Finding, Kind
from reconciler.findings.last_write import AFTER_SNAPSHOT, Identity, LastWrite, NoWriteFound
from reconciler.model.config import (
    CONTROL_PLANE_USERS,
    NODE_USER_PREFIX,
    NODES_GROUP,
    AuditIdentities,
    IdentityPattern,
)
from reconciler.model.live import LiveState
from reconciler.sources.audit_log import AuditTarget, AuditWrite, last_writes
from reconciler.telemetry.logs import phase

_RESOURCES: dict[tuple[str, str], Resource] = {r.type_key: r for r in (*KAI_AND_NVCA, NODE, CONFIG_MAP, SECRET)}
HELM_RELEASE_KIND = "HelmRelease"


@dataclass(frozen=True)
class AuditCutOff:
    """The last moment a write can have shaped the live state compared, and why it may be later than that."""

    until: datetime
    caveat: str | None = None


def audit_cut_off(live: LiveState, started: datetime) -> AuditCutOff:
    """A cluster read now: the run's start. A snapshot: when it was taken, as it says (a write after it, by
    kai-gitops say, is not what it shows); one that does not say is cut at the run's start, and says so."""
    if live.captured_at is not None:
        return AuditCutOff(min(live.captured_at, started))
    return AuditCutOff(started, AFTER_SNAPSHOT if live.from_snapshot else None)


def identities_of_run(identities: AuditIdentities, live: LiveState) -> AuditIdentities:
    """The tool's own writes are known by who it runs as: a cluster read through the pod's service account
    adds that ServiceAccount's username (whatever its namespace and name in this install)."""
    from reconciler.sources.cluster import cluster_source
    from reconciler.sources.cluster.kubeconfig import IN_CLUSTER_LABEL, service_account_user

    if live.from_snapshot or live.source != cluster_source(IN_CLUSTER_LABEL):
        return identities
    user = service_account_user()
    return replace(identities, running_as=(*identities.running_as, user)) if user else identities


def with_last_writes(
    findings: list[Finding], files: Sequence[str], identities: AuditIdentities, cut_off: AuditCutOff
) -> list[Finding]:
    """`findings` with `last_write` set on each drift finding whose object the logs saw written."""
    if not files:
        return findings
    targets = {
        f.subject: target
        for f in findings
        if f.kind is Kind.DRIFT and f.subject and (target := audit_target(f.subject)) is not None
    }
    if not targets:  # no drift to explain: the logs were checked readable before the run, and need no read
        return findings
    with phase("read-audit-log"):
        found = last_writes(files, set(targets.values()), cut_off.until)
    none_found = NoWriteFound(len(files), format_instant(cut_off.until))
    return [
        _attributed(f, found.get(targets[f.subject]), identities, cut_off.caveat, none_found)
        if f.kind is Kind.DRIFT and f.subject in targets
        else f
        for f in findings
    ]


def _attributed(
    finding: Finding,
    write: AuditWrite | None,
    identities: AuditIdentities,
    caveat: str | None,
    none_found: NoWriteFound,
) -> Finding:
    if write is None:
        return replace(finding, no_write_found=none_found)
    managers = tuple(a.manager for a in finding.attribution if a.manager)
    return replace(finding, last_write=replace(last_write(write, identities, managers), caveat=caveat))


def audit_target(subject: ObjectRef) -> AuditTarget | None:
    """How an audit Event names the subject; a Helm release is written as its revisions' Secrets."""
    if subject.kind == HELM_RELEASE_KIND:
        return AuditTarget(
            SECRET.group, SECRET.plural, subject.namespace, f"sh.helm.release.v1.{subject.name}.v", prefix=True
        )
    resource = _RESOURCES.get((subject.api_version, subject.kind))
    if resource is None:
        return None
    return AuditTarget(resource.group, resource.plural, subject.namespace, subject.name)


def last_write(write: AuditWrite, identities: AuditIdentities, managers: Sequence[str] = ()) -> LastWrite:
    """The impersonated user, when there is one, is who the API server authorized the write as: it is the one
    named, with the authenticated user beside it. `managers`: the field managers owning the drifted fields."""
    user, groups = (
        (write.impersonated_user, write.impersonated_groups) if write.impersonated_user else (write.user, write.groups)
    )
    identity = classify(user, write.user_agent, identities, groups, managers)
    if (
        write.impersonated_user
        and classify(write.user, write.user_agent, identities, write.groups, managers) is Identity.PERSON
    ):
        identity = Identity.PERSON  # a person acting as the operator (kubectl --as) is still a person's change
    return LastWrite(
        user,
        identity,
        write.stamp,
        write.verb,
        write.audit_id,
        groups,
        write.user_agent,
        write.source_ip,
        write.user if write.impersonated_user else None,
    )


def classify(
    user: str,
    user_agent: str | None,
    identities: AuditIdentities,
    groups: Sequence[str] = (),
    managers: Sequence[str] = (),
) -> Identity:
    """By the authenticated user (and its groups), never by a user agent alone: a listed tool, the control
    plane, or a person. An unknown login is a person, whatever its name looks like (`system:admin`)."""
    if user in identities.running_as or _listed(identities.gitops, user, user_agent, managers):
        return Identity.GITOPS
    if _control_plane(user, groups) or _listed(identities.system, user, user_agent, managers):
        return Identity.SYSTEM
    return Identity.PERSON


def _control_plane(user: str, groups: Sequence[str]) -> bool:
    """Upstream Kubernetes's own components; a node only with the group the API server gives nodes."""
    return user in CONTROL_PLANE_USERS or (user.startswith(NODE_USER_PREFIX) and NODES_GROUP in groups)


def _listed(patterns: tuple[IdentityPattern, ...], user: str, user_agent: str | None, managers: Sequence[str]) -> bool:
    return any(p.matches(user, user_agent, managers) for p in patterns)
