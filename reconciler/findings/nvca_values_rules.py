"""The NVCA operator values rules written in Python (checks/nvca_values.py): they read inside
`agentConfig.mergeConfig`, a YAML document held in a string, which the Rego facts do not carry."""

from __future__ import annotations

from reconciler.findings.finding import Severity
from reconciler.findings.rules import RuleMeta, Scope

MERGE_CONFIG_FIRST_CLASS = RuleMeta(
    "NVCA-V-001",
    "agentConfig.mergeConfig sets no field the NVCA operator chart now generates",
    Severity.WARNING,
    Scope.STATIC,
    "The nvca-operator chart generates the NVCA agent configuration from first-class values (byoo.*, utils "
    "resources, storage and worker settings) and merges agentConfig.mergeConfig over it last: a field set there "
    "silently clobbers what the values generate, and the chart marks it as legacy (agent-config-merge "
    "annotation nvcf.nvidia.com/legacy-first-class-config). mergeConfig is deprecated for these fields.",
    "Move the field to its first-class value of the nvca-operator chart and delete it from mergeConfig; keep "
    "mergeConfig for what has no value (cluster.validationPolicy).",
    "docs/policies.md#feature-gates / NVIDIA/nvcf deploy/helm/nvca-operator templates/_helpers.tpl "
    "(nvcaop.firstClassAgentConfigKeys, nvcaop.usesLegacyFirstClassConfig), #969, #1648, PR #1689",
)

NVCA_VALUES_RULES = (MERGE_CONFIG_FIRST_CLASS,)
