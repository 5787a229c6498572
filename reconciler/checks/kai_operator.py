"""kai-config synced but not acted on: the operator's conditions read as the running chart version writes
them (KAI-O-001), and Helm hook annotations an E1 chart left on it (KAI-O-002) (docs/policies.md#kai-config-health).

The KAI operator's status reconciler (pkg/operator/controller/status_reconciler at each tag) writes
Reconciling, Deployed, Available, DependenciesFulfilled and Ready, each with its observedGeneration.
v0.10.0 to v0.12.15 write `Reconciling` True on every reconcile (reason `reconciled`) and no `Ready`:
there, True means nothing and a missing Ready is normal.
"""

from __future__ import annotations

from reconciler.core.jsonvalue import JSONObject
from reconciler.core.redact import redact_free_text
from reconciler.core.resources import CONFIG
from reconciler.findings.builtin_rules import CONFIG_HOOK_LEFT, CONFIG_NOT_RECONCILED
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.chart_keys import era_of
from reconciler.model.desired import RELEASE_NAME, RELEASE_NAMESPACE, DesiredCluster
from reconciler.model.kai_config import CONFIG_NAME
from reconciler.model.live import KaiObject, LiveState
from reconciler.model.values import parse_version

Version = tuple[int, int, int]
_RECONCILING_ALWAYS_TRUE = ((0, 10, 0), (0, 12, 15))     # and no Ready condition
HOOK_ANNOTATIONS = ("helm.sh/hook", "helm.sh/hook-weight")


def kai_operator_findings(live: LiveState, desired: DesiredCluster | None) -> list[Finding]:
    config = live.kai_config
    if config is None:
        return []
    version = _running_version(live, desired)
    cluster = desired.name if desired is not None else ""
    anchor = desired.locate("config", ("clusters", desired.config.index)) if desired is not None else None
    findings = []
    evidence = condition_problems(config, version)
    if evidence:
        findings.append(CONFIG_NOT_RECONCILED.finding(
            Kind.VIOLATION, f"kai-config is not reconciled by the KAI operator: {'; '.join(evidence)}", cluster,
            subject=CONFIG.ref(CONFIG_NAME), location=anchor, extra={"evidence": evidence},
            fix=Fix(Action.NONE, "read what the operator reports, then its operands and logs",
                    command=f"kubectl get configs.kai.scheduler {CONFIG_NAME} -o jsonpath='{{.status.conditions}}'; "
                            f"kubectl -n {RELEASE_NAMESPACE} logs deployment/kai-operator --tail=50")))
    left = [a for a in HOOK_ANNOTATIONS if a in config.annotations]
    if left and era_of(_shown(version)) in ("E2", "E3"):
        findings.append(CONFIG_HOOK_LEFT.finding(
            Kind.VIOLATION, f"kai-config still carries {', '.join(left)} from a pre-hook chart; the "
                            f"kai-config-deployer Job of v{_shown(version)} removes them when it runs, so it "
                            "has not run successfully since the upgrade", cluster,
            subject=CONFIG.ref(CONFIG_NAME), location=anchor,
            fix=Fix(Action.NONE, "check the deployer Job, then remove the annotations",
                    command=f"kubectl -n {RELEASE_NAMESPACE} get job kai-config-deployer; kubectl annotate "
                            f"configs.kai.scheduler {CONFIG_NAME} {' '.join(f'{a}-' for a in left)}")))
    return findings


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
            problems.append(f"{kind} is for generation {condition.get('observedGeneration')}, the spec is at "
                            f"{config.generation}")
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
