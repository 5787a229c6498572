"""Shared helpers of tests/outputs/conftest.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from reconciler.checks.nvca import Verdict
from reconciler.core.refs import Location, ObjectRef
from reconciler.core.resources import queue_ref
from reconciler.findings.builtin_rules import DRIFT_RULES
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from reconciler.findings.rules import RuleMeta
from reconciler.report.report import ClusterReport, GitInfo, Report

COMMIT = "05a796ecd26f0b1c2d3e4f5a6b7c8d9e0f1a2b3c"

# What a hostile value may try: close a table cell, add HTML, ping people, end a workflow command, add one.
HOSTILE = (
    "evil|<img src=x onerror=alert(1)> **bold** [link](http://x) @admin #1 `tick` "
    "%0A::error::pwned\r\n::add-mask::x, a:b"
)

PATCH_COMMAND = (
    "kubectl patch queues.scheduling.run.ai default-parent-queue --type merge -p "
    '\'{"spec":{"resources":{"cpu":{"limit":-1,"overQuotaWeight":1,"quota":-1}}}}\''
)


def sample_findings() -> list[Finding]:
    parent = queue_ref("default-parent-queue")
    env = Location("environments/prod.yaml", 26, 5, ("addons", "kaiScheduler", "enabled"), 26, 18)
    drift = Finding(
        "KAI-D-002",
        Kind.DRIFT,
        Severity.ERROR,
        "Queue default-parent-queue differs from Git: cpu.quota 0 → -1.",
        "prod-addon",
        parent,
        env,
        desired={"cpu.quota": -1},
        live={"cpu.quota": 0},
        title="Queue differs from Git",
        fix=Fix(
            Action.UPDATE,
            "patch Queue default-parent-queue spec",
            patch={"spec": {"resources": {"cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}},
        ),
        changes=(DriftedField(("spec", "resources", "cpu", "quota"), 0.0, -1.0, "cpu.quota"),),
    )
    limited = Finding(
        "KAI-Q-011",
        Kind.VIOLATION,
        Severity.ERROR,
        "Queue default-parent-queue is limited: cpu quota=0",
        "prod-addon",
        parent,
        None,
        title="Queues used by NVCF pods are unlimited",
        fix=Fix(Action.NONE, "Make the queue unlimited.", command=PATCH_COMMAND),
    )
    predicted = Finding(
        "NVCA-H-002",
        Kind.VIOLATION,
        Severity.ERROR,
        "CPU resource violation for queue default-parent-queue: expected quota=-1, got quota=0",
        "prod-addon",
        parent,
        None,
        title="NVCA reports the queues unhealthy",
        fix=Fix(Action.NONE, "Patch the queue.", command=PATCH_COMMAND),
    )
    node = Finding(
        "NVCA-S-012",
        Kind.VIOLATION,
        Severity.WARNING,
        'node gpu-node-2 has nvca.nvcf.nvidia.io/schedule="True"',
        "prod-addon",
        ObjectRef("v1", "Node", "gpu-node-2"),
        None,
        title="Schedule label is exactly true",
        fix=Fix(
            Action.NONE, "Set the label to true.", command="kubectl label node gpu-node-2 nvca.nvcf.nvidia.io/schedule-"
        ),
    )
    gates = Location("clusters/lab/nvca-operator-values.yaml", 5, 60, ("selfManaged", "featureGateValues", 2), 5, 74)
    hostile = Finding(
        "NVCA-G-005",
        Kind.VIOLATION,
        Severity.ERROR,
        f'feature gate "{HOSTILE}" is a typo',
        "lab-standalone",
        None,
        gates,
        title=f"Gate names are spelled right {HOSTILE}",
        fix=Fix(Action.NONE, f"Spell it {HOSTILE}", command=f"echo '{HOSTILE}' ```"),
    )
    spread = Location("clusters/lab/kai-values.yaml", 5, 3, ("scheduler", "placementStrategy"), 5, 28)
    waived = Finding(
        "KAI-V-001",
        Kind.VIOLATION,
        Severity.WARNING,
        'scheduler.placementStrategy is "spread"',
        "lab-standalone",
        None,
        spread,
        title="Placement is binpack",
        fix=Fix(Action.NONE, "Set scheduler.placementStrategy: binpack"),
        waived_by="lab experiment (owner: team-lab, expires 2099-12-31)",
    )
    return [drift, limited, predicted, node, hostile, waived]


def rule(rule_id: str, severity: str = "error", scope: str = "static") -> RuleMeta:
    return RuleMeta(
        rule_id,
        f"{rule_id} title",
        severity,
        scope,
        f"why {rule_id} matters",
        f"how to fix {rule_id}",
        f"where {rule_id} comes from",
    )


POLICY_RULES = [
    rule("KAI-Q-001"),
    rule("KAI-Q-011", scope="live"),
    rule("KAI-V-001", "warning"),
    rule("NVCA-G-005"),
    rule("NVCA-H-002", scope="live"),
    rule("NVCA-S-012", "warning", "live"),
]

STATIC_RULES = [r for r in POLICY_RULES if r.scope == "static"]


def anchor(index: int) -> Location:
    return Location("kai-gitops.yaml", 3 + 8 * index, 5, ("clusters", index), 10 + 8 * index, 30)


def sample_report(command: str = "check") -> Report:
    findings = sample_findings()
    git = GitInfo(".", "HEAD", COMMIT)
    prod = ClusterReport(
        "prod-addon",
        git,
        "snapshot prod.yaml",
        Verdict(False, ("CPU resource violation for queue default-parent-queue",)),
        findings=[f for f in findings if f.cluster == "prod-addon"],
        rules=[*DRIFT_RULES, *POLICY_RULES],
        anchor=anchor(0),
    )
    lab = ClusterReport(
        "lab-standalone",
        git,
        findings=[f for f in findings if f.cluster == "lab-standalone"],
        rules=STATIC_RULES,
        anchor=anchor(1),
    )
    clean = ClusterReport("edge-clean", git, rules=STATIC_RULES, anchor=anchor(2))
    change = Finding(
        "KAI-W-003",
        Kind.VIOLATION,
        Severity.INFO,
        "this change edits what judges it (policy/x.rego)",
        "(repository)",
        None,
        Location("policy/x.rego"),
        title="Change edits policies or waivers",
        fix=Fix(Action.NONE, "have the policy owners review these files"),
    )
    return Report(command, [prod, lab, clean], Severity.WARNING, [change])
