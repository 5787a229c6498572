"""NVCA operator values (NVCA-V-001): `agentConfig.mergeConfig` setting an agent field that has a first-class
chart value.

The nvca-operator chart merges mergeConfig over the configuration it generates from its own values, so a field
set in both is the merge's: the value the chart documents is silently overridden. The chart itself detects such
a mergeConfig (a key of its `agent` map that starts with `byoo`, in any case, or is one of the keys below) and
marks the rendered ConfigMap as legacy; this check says so at review time, at the mergeConfig line.
"""

from __future__ import annotations

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import as_object
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.findings.nvca_values_rules import MERGE_CONFIG_FIRST_CLASS
from reconciler.model.desired import DesiredCluster
from reconciler.yamlio.document import load_document

MERGE_CONFIG_PATH = ("agentConfig", "mergeConfig")
# nvcaop.firstClassAgentConfigKeys (NVIDIA/nvcf deploy/helm/nvca-operator/nvca-operator/templates/_helpers.tpl)
FIRST_CLASS_AGENT_KEYS = frozenset(
    (
        "additionalResourceOverhead",
        "UtilsResources",
        "sharedStorage",
        "internalPersistentStorage",
        "minHealthcheckRefreshWait",
        "staticGPUCapacity",
        "computeBackend",
        "requestsNamespace",
        "namespaceLabels",
        "featureFlags",
        "skipSelfDestruct",
        "forceSelfDestruct",
        "csiVolumeMountOptions",
        "credRenewInterval",
        "heartbeatInterval",
        "syncQueueInterval",
        "syncRequestStatusInterval",
        "syncAcknowledgeRequestInterval",
        "periodicInstanceStatusInterval",
        "icmsRequestAckInterval",
        "icmsRequestAckRetryTimeout",
    )
)


def first_class_keys(agent_keys: list[str]) -> list[str]:
    """The keys of mergeConfig's `agent` map the chart now generates, as the chart tells them apart."""
    return [k for k in agent_keys if k.lower().startswith("byoo") or k in FIRST_CLASS_AGENT_KEYS]


def nvca_values_findings(desired: DesiredCluster) -> list[Finding]:
    doc_id = "nvca_values" if "nvca_values" in desired.docs else None
    if doc_id is None:
        return []
    doc = desired.docs[doc_id]
    text = doc.get(MERGE_CONFIG_PATH)
    if not isinstance(text, str) or not text.strip():
        return []
    location = doc.locate(MERGE_CONFIG_PATH)
    try:
        merged = load_document(text, str(location)).data
    except UserError:
        return []  # NVCA refuses it too; the workload facts report a broken mergeConfig where they need it
    keys = first_class_keys([str(k) for k in as_object(as_object(merged).get("agent"))])
    if not keys:
        return []
    listed = ", ".join(f"agent.{k}" for k in keys)
    message = (
        f"agentConfig.mergeConfig sets {listed}, which the nvca-operator chart now generates from its own "
        "values: the merge silently overrides them (mergeConfig is deprecated for these fields)"
    )
    return [
        MERGE_CONFIG_FIRST_CLASS.finding(
            Kind.VIOLATION,
            message,
            desired.name,
            location=location,
            fix=Fix(Action.NONE, f"move {listed} to the chart's first-class values and delete them from mergeConfig"),
        )
    ]
