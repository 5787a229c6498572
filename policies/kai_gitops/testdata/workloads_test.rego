# Facts for the function-chart rule tests (NVCF-F-*): what an add-on cluster with every add-on and
# topology-aware scheduling on offers, and object builders. Clean unless a test bends them.
package kai_gitops.testdata

workload_offer := {
	"mode": "addon",
	"allowed_types": [
		"grove.io/v1alpha1.PodClique", "grove.io/v1alpha1.PodCliqueScalingGroup", "grove.io/v1alpha1.PodCliqueSet",
		"nvidia.com/v1alpha1.DynamoGraphDeployment", "scheduler.grove.io/v1alpha1.PodGang",
		"scheduling.run.ai/v2alpha2.PodGroup",
	],
	"types_file": "environments/prod.yaml",
	"kai": true, "grove": true, "dynamo": true, "topology_aware": true,
	"topologies": [{"name": "nvcf-mnnvl-topology", "levels": [
		{"nodeLabel": "nvidia.com/gpu.clique", "alias": null},
		{"nodeLabel": "kubernetes.io/hostname", "alias": null},
	]}],
	"bindings": [{"name": "nvcf-mnnvl-topology-binding", "topology": "nvcf-mnnvl-topology", "levels": [
		{"domain": "gpuclique", "key": "nvidia.com/gpu.clique"},
		{"domain": "hostname", "key": "kubernetes.io/hostname"},
	]}],
	"queues": ["default-parent-queue", "default-queue"],
	"kai_version": "v0.16.7",
	"kai_features": {"min_sub_group": true, "skip_podgrouper": true, "topology_alias": false},
}

# The facts of one cluster running `objects`, its offer bent by `offer` (object.union: lists replace).
workload_facts(objects, offer) := object.union(addon_static, {"desired": {"workloads": {
	"context": object.union(workload_offer, offer),
	"objects": objects,
}}})

# One rendered object of workload "fn"; `rest` adds metadata and spec.
workload_object(api, kind, rest) := object.union(
	{
		"workload": "fn", "doc": "workload:fn:0", "file": "charts/fn/templates/x.yaml",
		"apiVersion": api, "kind": kind, "name": "x", "namespace": null,
		"gvk": workload_gvk(api, kind), "metadata": {"annotations": {}, "labels": {}}, "spec": {},
	},
	rest,
)

workload_gvk(api, kind) := sprintf("%s.%s", [api, kind]) if contains(api, "/")

workload_gvk(api, kind) := sprintf("core/%s.%s", [api, kind]) if not contains(api, "/")

gang_annotations := {
	"kai.scheduler/topology": "nvcf-mnnvl-topology",
	"kai.scheduler/topology-required-placement": "nvidia.com/gpu.clique",
}

# A StatefulSet gang done right: parallel, topology on its own metadata.
gang_statefulset := workload_object("apps/v1", "StatefulSet", {
	"metadata": {"annotations": gang_annotations},
	"spec": {"replicas": 2, "podManagementPolicy": "Parallel", "template": {"metadata": {"labels": {"app": "w"}}}},
})

grove_pcs := workload_object("grove.io/v1alpha1", "PodCliqueSet", {"spec": {"replicas": 1, "template": {
	"topologyConstraint": {"topologyName": "nvcf-mnnvl-topology-binding", "pack": {"required": "gpuclique"}},
	"cliques": [
		{"name": "leader", "spec": {"replicas": 1, "minAvailable": 1}},
		{"name": "worker", "topologyConstraint": {"pack": {"required": "hostname"}}, "spec": {"replicas": 2, "minAvailable": 2}},
	],
}}})

dynamo_graph := workload_object("nvidia.com/v1alpha1", "DynamoGraphDeployment", {"spec": {
	"topologyConstraint": {"topologyProfile": "nvcf-mnnvl-topology-binding", "packDomain": "gpuclique"},
	"services": {"VllmWorker": {"multinode": {"nodeCount": 2}, "topologyConstraint": {"packDomain": "gpuclique"}}},
}})

kai_topology := workload_object("kai.scheduler/v1alpha1", "Topology", {"spec": {"levels": [
	{"nodeLabel": "nvidia.com/gpu.clique"},
	{"nodeLabel": "kubernetes.io/hostname"},
]}})

pod_group := workload_object("scheduling.run.ai/v2alpha2", "PodGroup", {"spec": {"queue": "default-queue", "minMember": 2}})
