"""The function charts a cluster runs, and what that cluster offers them, as policy facts (policies/FACTS.md).

What a cluster offers is read from its desired state: the extra types NVCA passes through (the stack's
add-on entries, the gate list as written, the operator's own `agentConfig.mergeConfig`), the Topologies and
Grove bindings the stack renders, the Queues Git expects and the KAI version. The objects are the render,
pruned of what no rule reads (pod specs, Secret and ConfigMap data) and redacted.
"""

from __future__ import annotations

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONLike, JSONObject, JSONValue, as_object
from reconciler.core.redact import redact
from reconciler.model.desired import DesiredCluster
from reconciler.model.values import parse_version
from reconciler.model.workloads import RenderedObject, RenderedWorkload
from reconciler.yamlio.document import YamlDoc, load_document

MERGE_CONFIG_PATH = ("agentConfig", "mergeConfig")
TYPES_PATH = ("cluster", "validationPolicy", "allowedExtraKubernetesTypes")
# What the compute-plane stack appends to allowedExtraKubernetesTypes, per add-on (02-nvca.yaml.gotmpl).
KAI_TYPES = ("scheduling.run.ai/v2alpha2.PodGroup",)
GROVE_TYPES = (
    "grove.io/v1alpha1.PodCliqueSet",
    "grove.io/v1alpha1.PodClique",
    "grove.io/v1alpha1.PodCliqueScalingGroup",
    "scheduler.grove.io/v1alpha1.PodGang",
)
DYNAMO_TYPES = tuple(
    f"nvidia.com/v1alpha1.{kind}"
    for kind in (
        "DynamoCheckpoint",
        "DynamoComponentDeployment",
        "DynamoGraphDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
        "DynamoModel",
        "DynamoWorkerMetadata",
    )
)
# Keys whose values no rule reads and that may carry a function's secrets or bulk: dropped, not sent.
PRUNED = frozenset({"containers", "initContainers", "ephemeralContainers", "volumes", "podSpec", "extraPodSpec"})
DROPPED_TOP = frozenset({"data", "stringData", "binaryData"})


def workload_facts(desired: DesiredCluster, workloads: list[RenderedWorkload]) -> dict[str, JSONLike]:
    """`input.desired.workloads`: the cluster's offer and every object of the workloads deployed to it."""
    objects: list[JSONLike] = [_object_facts(w.config.name, obj) for w in workloads for obj in w.objects]
    return {"context": cluster_offer(desired), "objects": objects}


def register_docs(desired: DesiredCluster, workloads: list[RenderedWorkload]) -> None:
    """Findings name an object's doc id; the cluster's docs resolve it to the template's file:line."""
    for workload in workloads:
        for obj in workload.objects:
            desired.docs[obj.doc_id] = obj.doc


def cluster_offer(desired: DesiredCluster) -> dict[str, JSONLike]:
    addons = desired.addons
    user_gates = desired.gates.user if desired.gates else []
    kai = desired.installs_kai if desired.config.mode == "standalone" else addons["kaiScheduler"]
    topology_on = desired.config.mode == "addon" and addons["topologyAwareScheduling"] and addons["kaiScheduler"]
    topologies = _stack_topologies(desired) if topology_on else []
    bindings = [_binding(t) for t in topologies] if topology_on and addons["groveOperator"] else []
    version = desired.config.stack_kai_version if desired.kai_values_doc is None else desired.config.kai_chart_version
    return {
        "mode": desired.config.mode,
        "allowed_types": sorted(set(_allowed_types(desired, user_gates))),
        "types_file": _types_file(desired),
        "kai": kai,
        "grove": addons["groveOperator"],
        "dynamo": addons["dynamoOperator"] or "DynamoOperatorSupport" in user_gates,
        "topology_aware": topology_on,
        "topologies": topologies,
        "bindings": bindings,
        "queues": sorted({q.spec.name for q in desired.queues}),
        "kai_version": version,
        "kai_features": _kai_features(version),
    }


def _kai_features(version: str) -> JSONObject:
    """What the pinned KAI reads: PodGroup minSubGroup (v0.15.3), the skip-podgrouper annotation (v0.15.0),
    Topology level aliases (v0.17.0)."""
    parsed = parse_version(version) or (0, 0, 0)
    return {
        "min_sub_group": parsed >= (0, 15, 3),
        "skip_podgrouper": parsed >= (0, 15, 0),
        "topology_alias": parsed >= (0, 17, 0),
    }


def _allowed_types(desired: DesiredCluster, user_gates: list[str]) -> list[str]:
    """NVCA's allowedExtraKubernetesTypes for this cluster, each as `group/version.Kind` (its error's words).

    In add-on mode the stack appends its entries to the operator's own list; the gate test is the stack's
    exact list match (`+KAIScheduler` does not count)."""
    found = _merge_config_types(desired)
    if desired.config.mode == "addon":
        if desired.addons["kaiScheduler"] or "KAIScheduler" in user_gates:
            found += KAI_TYPES
        if desired.addons["groveOperator"]:
            found += GROVE_TYPES
        if desired.addons["dynamoOperator"] or "DynamoOperatorSupport" in user_gates:
            found += DYNAMO_TYPES
    return found


def _types_doc(desired: DesiredCluster) -> str | None:
    return "nvca_values" if "nvca_values" in desired.docs else ("env" if "env" in desired.docs else None)


def _types_file(desired: DesiredCluster) -> str | None:
    doc_id = _types_doc(desired)
    return desired.docs[doc_id].file if doc_id else None


def _merge_config_types(desired: DesiredCluster) -> list[str]:
    doc_id = _types_doc(desired)
    if doc_id is None:
        return []
    doc = desired.docs[doc_id]
    text = doc.get(MERGE_CONFIG_PATH)
    if text is None:
        return []
    where = str(doc.locate(MERGE_CONFIG_PATH))
    if not isinstance(text, str):
        raise UserError("agentConfig.mergeConfig must be a string (NVCA merges it as YAML text)", where=where)
    merged = load_document(text, where)
    entries = YamlDoc(where, merged.data).get(TYPES_PATH) or []
    if not isinstance(entries, list):
        raise UserError(
            "cluster.validationPolicy.allowedExtraKubernetesTypes in agentConfig.mergeConfig must be a list",
            where=where,
        )
    return [_gvk(as_object(e)) for e in entries]


def _gvk(entry: JSONObject) -> str:
    group = entry.get("group") or "core"
    return f"{group}/{entry.get('version', '')}.{entry.get('kind', '')}"


def _stack_topologies(desired: DesiredCluster) -> list[JSONValue]:
    env = desired.docs["env"]
    raw = env.get(("addons", "topologyAwareScheduling", "topologies")) or []
    out: list[JSONValue] = []
    for entry in raw if isinstance(raw, list) else []:
        item = as_object(entry)
        levels = [as_object(level) for level in _items(item.get("levels"))]
        out.append(
            {
                "name": item.get("name"),
                "levels": [{"nodeLabel": lv.get("nodeLabel"), "alias": lv.get("alias")} for lv in levels],
            }
        )
    return out


def _items(value: JSONValue) -> list[JSONValue]:
    """The mappings of a list (a level list as written may hold anything)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _binding(topology: JSONValue) -> JSONValue:
    """The Grove ClusterTopologyBinding the stack derives: `<topology>-binding`, each level's domain the last
    segment of its node label with the dots removed (nvidia.com/gpu.clique -> gpuclique)."""
    item = as_object(topology)
    levels = [as_object(lv) for lv in _items(item.get("levels"))]
    return {
        "name": f"{item.get('name')}-binding",
        "topology": item.get("name"),
        "levels": [
            {"domain": str(lv.get("nodeLabel") or "").rsplit("/", 1)[-1].replace(".", ""), "key": lv.get("nodeLabel")}
            for lv in levels
        ],
    }


def _object_facts(workload: str, obj: RenderedObject) -> JSONLike:
    data = as_object(obj.doc.data)
    metadata = as_object(data.get("metadata"))
    kept: JSONObject = {k: _pruned(v) for k, v in data.items() if k not in DROPPED_TOP and k != "metadata"}
    return {
        "workload": workload,
        "doc": obj.doc_id,
        "file": obj.doc.file,
        "apiVersion": obj.api_version,
        "kind": obj.kind,
        "name": obj.name,
        "namespace": obj.namespace,
        "gvk": _object_gvk(obj),
        "metadata": {
            "annotations": redact(as_object(metadata.get("annotations"))),
            "labels": as_object(metadata.get("labels")),
        },
        "spec": redact(as_object(kept.get("spec"))),
    }


def _object_gvk(obj: RenderedObject) -> str:
    group, _, version = obj.api_version.rpartition("/")
    return f"{group or 'core'}/{version}.{obj.kind}"


def _pruned(value: JSONValue) -> JSONValue:
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if k not in PRUNED}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value
