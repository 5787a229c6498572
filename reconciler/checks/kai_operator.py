"""KAI synced but broken (docs/policies.md#kai-config-health): kai-config's conditions read as the running chart
version's operator writes them (KAI-O-001), Helm hook annotations an E1 chart left on it (KAI-O-002), operands
not available or owned by a deleted kai-config (KAI-O-003), pods started before the ServiceAccount they use
was re-created (KAI-O-004, the 401 window of KAI-Scheduler #1536), a failed deployer Job (KAI-O-005), the
scheduler's leader Lease not renewed (KAI-O-006), SchedulingShards not reconciled, read as kai-config
(KAI-O-007), a v0.17.0+ scheduler restarted by a 401 after its ServiceAccount was re-created (KAI-O-008),
kai-config without the Helm ownership metadata render mode needs (KAI-O-009).

The KAI operator's status reconciler (pkg/operator/controller/status_reconciler at each tag) writes
Reconciling, Deployed, Available, DependenciesFulfilled and Ready, each with its observedGeneration.
v0.10.0 to v0.12.15 write `Reconciling` True on every reconcile (reason `reconciled`) and no `Ready`:
there, True means nothing and a missing Ready is normal.
"""

from __future__ import annotations

from datetime import UTC, datetime

from reconciler.core.jsonvalue import JSONObject
from reconciler.core.redact import redact_free_text
from reconciler.core.refs import Location
from reconciler.core.resources import CONFIG, DEPLOYMENT, JOB, LEASE, POD, SCHEDULING_SHARD
from reconciler.findings.builtin_rules import (
    CONFIG_HOOK_LEFT,
    CONFIG_NOT_HELM_OWNED,
    CONFIG_NOT_RECONCILED,
    DEPLOYER_FAILED,
    LEADER_NOT_RENEWED,
    OPERANDS_UNAVAILABLE,
    SCHEDULER_RESTARTED_ON_401,
    SHARD_NOT_RECONCILED,
    TOKEN_WINDOW,
)
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.chart_keys import era_of
from reconciler.model.desired import RELEASE_NAME, RELEASE_NAMESPACE, DesiredCluster
from reconciler.model.kai_config import CONFIG_NAME
from reconciler.model.live import KaiObject, LiveState, Operand, PodSummary
from reconciler.model.values import parse_version

Version = tuple[int, int, int]
_RECONCILING_ALWAYS_TRUE = ((0, 10, 0), (0, 12, 15))  # and no Ready condition
_FIRST_SHARD_OPERAND = (0, 10, 0)
_FIRST_EXIT_ON_401 = (0, 17, 0)  # KAI-Scheduler #1823: the scheduler exits on 401 so the kubelet restarts it
SCHEDULER_ACCOUNT = "scheduler"  # the ServiceAccount kai-config owns and every shard's scheduler runs as
HELM_OWNER_ANNOTATIONS = {
    "meta.helm.sh/release-name": RELEASE_NAME,
    "meta.helm.sh/release-namespace": RELEASE_NAMESPACE,
}
HELM_OWNER_LABELS = {"app.kubernetes.io/managed-by": "Helm"}
HOOK_ANNOTATIONS = ("helm.sh/hook", "helm.sh/hook-weight")
STALE_LEASES = 4  # durations without a renewal before the leader counts as gone (a renewal is every 2 s or so)


def kai_operator_findings(live: LiveState, desired: DesiredCluster | None, cluster: str) -> list[Finding]:
    anchor = desired.locate("config", ("clusters", desired.config.index)) if desired is not None else None
    findings = _config_findings(live, desired, cluster, anchor) + _shard_findings(live, desired, cluster, anchor)
    findings += _operand_findings(live, _running_version(live, desired), cluster, anchor)
    if live.deployer_job_failed is not None:
        findings.append(
            DEPLOYER_FAILED.finding(
                Kind.VIOLATION,
                f"Job {RELEASE_NAMESPACE}/kai-config-deployer failed ({live.deployer_job_failed}): "
                "kai-config was not applied from the release's values",
                cluster,
                subject=JOB.ref("kai-config-deployer", RELEASE_NAMESPACE),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "read its pod's logs, fix the cause, upgrade the release again",
                    command=f"kubectl -n {RELEASE_NAMESPACE} logs job/kai-config-deployer",
                ),
            )
        )
    if live.scheduler_lease is not None and live.scheduler_lease[0] > STALE_LEASES * live.scheduler_lease[1]:
        age, duration = live.scheduler_lease
        findings.append(
            LEADER_NOT_RENEWED.finding(
                Kind.VIOLATION,
                f"Lease {RELEASE_NAMESPACE}/kai-scheduler was last renewed {age:.0f} s ago (its duration "
                f"is {duration} s): no scheduler leads",
                cluster,
                subject=LEASE.ref("kai-scheduler", RELEASE_NAMESPACE),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "read the scheduler's logs; on Unauthorized restart it",
                    command=f"kubectl -n {RELEASE_NAMESPACE} logs deployment/kai-scheduler-default --tail=50; "
                    f"kubectl -n {RELEASE_NAMESPACE} rollout restart deployment/kai-scheduler-default",
                ),
            )
        )
    return findings


def _operand_findings(live: LiveState, version: Version | None, cluster: str, anchor: Location | None) -> list[Finding]:
    findings = []
    uid = live.kai_config.uid if live.kai_config is not None else ""
    for operand in sorted(live.operands, key=lambda o: o.name):
        evidence = operand_problems(operand, uid)
        if evidence:
            findings.append(
                OPERANDS_UNAVAILABLE.finding(
                    Kind.VIOLATION,
                    f"Deployment {RELEASE_NAMESPACE}/{operand.name}: {'; '.join(evidence)}",
                    cluster,
                    subject=DEPLOYMENT.ref(operand.name, RELEASE_NAMESPACE),
                    location=anchor,
                    fix=Fix(
                        Action.NONE,
                        "see why it is not up",
                        command=f"kubectl -n {RELEASE_NAMESPACE} describe deployment {operand.name}",
                    ),
                )
            )
    recovered = restarted_on_401(live, version)
    for pod, account, created in token_window(live):
        if any(pod is restarted for restarted, _, _ in recovered):
            continue  # it went through the window and out of it (KAI-O-008)
        deployment = pod.name.rsplit("-", 2)[0]
        findings.append(
            TOKEN_WINDOW.finding(
                Kind.VIOLATION,
                f"pod {pod.namespace}/{pod.name} started at {pod.started}, before its ServiceAccount "
                f"{account} was created at {created}: its token is bound to the deleted one (401 "
                "Unauthorized until the kubelet rotates it)",
                cluster,
                subject=POD.ref(pod.name, pod.namespace),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "restart it so it gets a token of the current ServiceAccount",
                    command=f"kubectl -n {pod.namespace} rollout restart deployment/{deployment}",
                ),
            )
        )
    for pod, (container, count, finished), created in recovered:
        findings.append(
            SCHEDULER_RESTARTED_ON_401.finding(
                Kind.VIOLATION,
                f"pod {pod.namespace}/{pod.name}: container {container} ended at {finished} and was "
                f"restarted ({count} restarts), after its ServiceAccount {pod.service_account} was "
                f"re-created at {created}: the 401 window happened and the restart recovered it",
                cluster,
                subject=POD.ref(pod.name, pod.namespace),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "confirm the 401 in the previous container's log; find why kai-config was "
                    "re-created (an upgrade of a pre-hook chart, or a deletion)",
                    command=f"kubectl -n {pod.namespace} logs {pod.name} -c {container} --previous --tail=20; "
                    f"kubectl get configs.kai.scheduler {CONFIG_NAME} "
                    "-o jsonpath='{.metadata.creationTimestamp}'",
                ),
            )
        )
    return findings


def restarted_on_401(live: LiveState, version: Version | None) -> list[tuple[PodSummary, tuple[str, int, str], str]]:
    """Scheduler pods started before their ServiceAccount was re-created whose container then ended and was
    restarted: from v0.17.0 that is the scheduler exiting on 401 (before, it stays up and KAI-O-004 says so)."""
    if version is not None and version < _FIRST_EXIT_ON_401:
        return []
    found = []
    for pod in live.kai_pods:
        created = live.service_accounts.get(pod.service_account)
        if pod.service_account != SCHEDULER_ACCOUNT or not created or not pod.started:
            continue
        for restart in pod.restarts:
            finished = _instant(restart[2])
            if _instant(pod.started) < _instant(created) < finished < _NEVER:
                found.append((pod, restart, created))
                break
    return found


def operand_problems(operand: Operand, config_uid: str) -> list[str]:
    """Why an operand of the KAI operator is not serving, or is about to be garbage-collected."""
    if not any(kind in ("Config", "SchedulingShard") for kind, _, _ in operand.owners):
        return []  # not the operator's (kai-operator itself, a chart Deployment of v0.9.x)
    problems = []
    if operand.available < operand.replicas or operand.updated < operand.replicas:
        problems.append(f"{operand.available}/{operand.replicas} available, {operand.updated} updated")
    stale = [u for kind, name, u in operand.owners if kind == "Config" and name == CONFIG_NAME and u != config_uid]
    if stale and config_uid:
        problems.append(f"owned by kai-config UID {stale[0]}, not the current {config_uid}")
    return problems


def token_window(live: LiveState) -> list[tuple[PodSummary, str, str]]:
    """Running KAI pods started before the ServiceAccount they use was (re-)created."""
    found = []
    for pod in live.kai_pods:
        created = live.service_accounts.get(pod.service_account)
        if pod.phase == "Running" and created and pod.started and _instant(pod.started) < _instant(created):
            found.append((pod, pod.service_account, created))
    return found


_NEVER = datetime.max.replace(tzinfo=UTC)


def _instant(stamp: str) -> datetime:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return _NEVER


def _config_findings(
    live: LiveState, desired: DesiredCluster | None, cluster: str, anchor: Location | None
) -> list[Finding]:
    config = live.kai_config
    if config is None:
        return []
    version = _running_version(live, desired)
    findings = []
    evidence = condition_problems(config, version)
    if evidence:
        findings.append(
            CONFIG_NOT_RECONCILED.finding(
                Kind.VIOLATION,
                f"kai-config is not reconciled by the KAI operator: {'; '.join(evidence)}",
                cluster,
                subject=CONFIG.ref(CONFIG_NAME),
                location=anchor,
                extra={"evidence": evidence},
                fix=Fix(
                    Action.NONE,
                    "read what the operator reports, then its operands and logs",
                    command=f"kubectl get configs.kai.scheduler {CONFIG_NAME} -o jsonpath='{{.status.conditions}}'; "
                    f"kubectl -n {RELEASE_NAMESPACE} logs deployment/kai-operator --tail=50",
                ),
            )
        )
    if desired is not None and desired.kai_config_in_release:
        findings += _helm_ownership_findings(config, cluster, anchor)
    left = [a for a in HOOK_ANNOTATIONS if a in config.annotations]
    if left and era_of(_shown(version)) in ("E2", "E3"):
        findings.append(
            CONFIG_HOOK_LEFT.finding(
                Kind.VIOLATION,
                f"kai-config still carries {', '.join(left)} from a pre-hook chart; the "
                f"kai-config-deployer Job of v{_shown(version)} removes them when it runs, so it "
                "has not run successfully since the upgrade",
                cluster,
                subject=CONFIG.ref(CONFIG_NAME),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "check the deployer Job, then remove the annotations",
                    command=f"kubectl -n {RELEASE_NAMESPACE} get job kai-config-deployer; kubectl annotate "
                    f"configs.kai.scheduler {CONFIG_NAME} {' '.join(f'{a}-' for a in left)}",
                ),
            )
        )
    return findings


def _shard_findings(
    live: LiveState, desired: DesiredCluster | None, cluster: str, anchor: Location | None
) -> list[Finding]:
    version = _running_version(live, desired)
    if version is not None and version < _FIRST_SHARD_OPERAND:
        return []  # v0.9.x configures the scheduler from a chart ConfigMap: nothing writes shard status
    findings = []
    for shard in sorted(live.shards.values(), key=lambda s: s.name):
        evidence = condition_problems(shard, version)
        if evidence:
            findings.append(
                SHARD_NOT_RECONCILED.finding(
                    Kind.VIOLATION,
                    f"SchedulingShard {shard.name} is not reconciled by the KAI operator: {'; '.join(evidence)}",
                    cluster,
                    subject=SCHEDULING_SHARD.ref(shard.name),
                    location=anchor,
                    extra={"evidence": evidence},
                    fix=Fix(
                        Action.NONE,
                        "read what the operator reports; stale conditions with no kai-config mean "
                        "the shard reconcile fails before its status update",
                        command=f"kubectl get schedulingshards.kai.scheduler {shard.name} -o "
                        f"jsonpath='{{.status.conditions}}'; kubectl get configs.kai.scheduler "
                        f"{CONFIG_NAME}; kubectl -n {RELEASE_NAMESPACE} logs deployment/kai-operator "
                        "--tail=50",
                    ),
                )
            )
    return findings


def helm_ownership_missing(config: KaiObject) -> list[str]:
    """What Helm 3 checks before adopting an existing object into release kai-scheduler/kai-scheduler."""
    wanted = {f"annotation {k}": (config.annotations.get(k), v) for k, v in HELM_OWNER_ANNOTATIONS.items()}
    wanted |= {f"label {k}": (config.labels.get(k), v) for k, v in HELM_OWNER_LABELS.items()}
    return [
        f"{what}={redact_free_text(repr(have))} (not {want})" if have is not None else f"no {what}"
        for what, (have, want) in wanted.items()
        if have != want
    ]


def _helm_ownership_findings(config: KaiObject, cluster: str, anchor: Location | None) -> list[Finding]:
    missing = helm_ownership_missing(config)
    if not missing:
        return []
    annotate = " ".join(f"{k}={v}" for k, v in HELM_OWNER_ANNOTATIONS.items())
    label = " ".join(f"{k}={v}" for k, v in HELM_OWNER_LABELS.items())
    return [
        CONFIG_NOT_HELM_OWNED.finding(
            Kind.VIOLATION,
            f"kaiConfig.render renders kai-config into the Helm release, but the live one has "
            f'{", ".join(missing)}: Helm 3 refuses to adopt it ("invalid ownership metadata") and '
            "the install or upgrade fails",
            cluster,
            subject=CONFIG.ref(CONFIG_NAME),
            location=anchor,
            extra={"evidence": missing},
            fix=Fix(
                Action.NONE,
                "let Helm adopt it, then upgrade the release",
                command=f"kubectl annotate configs.kai.scheduler {CONFIG_NAME} --overwrite {annotate}; "
                f"kubectl label configs.kai.scheduler {CONFIG_NAME} --overwrite {label}",
            ),
        )
    ]


def condition_problems(config: KaiObject, version: Version | None) -> list[str]:
    """What the conditions say is wrong, read as `version`'s operator writes them (None: the current rules)."""
    if not config.conditions:
        return ["it has no status conditions (is the kai-operator Deployment running?)"]
    old = version is not None and _RECONCILING_ALWAYS_TRUE[0] <= version <= _RECONCILING_ALWAYS_TRUE[1]
    wanted = {"Deployed": "True", "Available": "True", "DependenciesFulfilled": "True"}
    if not old:
        wanted |= {"Reconciling": "False", "Ready": "True"}
    by_type = {str(c.get("type")): c for c in config.conditions}
    problems = []
    for kind, status in wanted.items():
        condition = by_type.get(kind)
        if condition is None:
            problems.append(f"no {kind} condition")
        elif str(condition.get("status")) != status:
            problems.append(f"{kind}={condition.get('status')} ({_said(condition)})")
        elif _stale(condition, config):
            problems.append(
                f"{kind} is for generation {condition.get('observedGeneration')}, the spec is at {config.generation}"
            )
    return problems


def _stale(condition: JSONObject, config: KaiObject) -> bool:
    observed = condition.get("observedGeneration")
    return isinstance(observed, int) and config.generation is not None and observed != config.generation


def _said(condition: JSONObject) -> str:
    return redact_free_text(f"{condition.get('reason', '')}: {condition.get('message', '')}".strip(": "))


def _running_version(live: LiveState, desired: DesiredCluster | None) -> Version | None:
    """The chart version the KAI release runs; else the one Git pins."""
    release = next((r for r in live.releases if (r.name, r.namespace) == (RELEASE_NAME, RELEASE_NAMESPACE)), None)
    if release is not None:
        return parse_version(release.chart_version)
    if desired is None:
        return None
    pin = desired.config.stack_kai_version if desired.config.mode == "addon" else desired.config.kai_chart_version
    return parse_version(pin)


def _shown(version: Version | None) -> str:
    return ".".join(map(str, version)) if version else ""
