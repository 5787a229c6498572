# Facts documents shared by the rule tests: clean baselines that tests bend with object.union.
package kai_gitops.testdata

unlimited := {"quota": -1, "limit": -1, "overQuotaWeight": 1}

unlimited_resources := {"cpu": unlimited, "gpu": unlimited, "memory": unlimited}

canonical_values := {
	"scheduler": {
		"placementStrategy": "binpack",
		"plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
		"actions": {"preempt": {"enabled": false}, "consolidation": {"enabled": false}},
	},
	"defaultQueue": {
		"createDefaultQueue": true,
		"parentName": "default-parent-queue",
		"childName": "default-queue",
		"parentResources": unlimited_resources,
		"childResources": unlimited_resources,
	},
}

# The top-level keys of KAI chart v0.16.8's and v0.16.9's values.yaml (reconciler/data/chart-values/v0.16.{8,9}.yaml).
chart_sections_v0_16 := [
	"admission", "binder", "crdupgrader", "defaultPriorityClasses", "defaultQueue", "defaultShard", "global",
	"kaiConfigDeployer", "nodescaleadjuster", "numaPlacementExporter", "operator", "podgroupcontroller", "podgrouper",
	"postCleanup", "prometheus", "queuecontroller", "scheduler", "topologyMigration",
]

# ... and v0.17.0's, which adds kaiConfig (render) and openshift.
chart_sections_v0_17 := array.concat(chart_sections_v0_16, ["kaiConfig", "openshift"])

addon_gates := [
	"DynamicGPUDiscovery", "InfraResourceOverhead", "EnforceHelmFunctionResourceLimits",
	"EnforceContainerFunctionResourceLimits", "EnforceHelmTaskResourceLimits",
	"EnforceContainerTaskResourceLimits", "BYOObservability", "KAIScheduler",
]

addon_static := {
	"facts_version": 1,
	"cluster": "test",
	"scope": "static",
	"desired": {
		"mode": "addon",
		"docs": {"env": "environments/test.yaml", "config": "kai-gitops.yaml"},
		"kai_chart_pin": "v0.16.7",
		"stack_kai_version": "v0.16.7",
		"defaults_version": "v0.16.9",
		"addons": {"kaiScheduler": true, "groveOperator": false, "dynamoOperator": false, "topologyAwareScheduling": false},
		"addons_doc": "env",
		"standalone_kai": false,
		"kai_values_doc": null,
		"kai_values_user": {},
		"kai_values_effective": canonical_values,
		"kai_chart": {"era": "E2", "sections": chart_sections_v0_16},
		"kai_manifests": [],
		"gates": {
			"doc": "env",
			"path": ["global", "nvcaOperator", "selfManaged", "featureGateValues"],
			"user": [],
			"effective": addon_gates,
			"enabled": sort(addon_gates),
			"disabled": [],
		},
		"shared_cluster": {"intent": "dedicated", "nodes": [], "selector": null},
		"extra_queues": [],
	},
}

standalone_gates := ["SelfHosted", "DynamicGPUDiscovery", "KAIScheduler"]

standalone_static := object.union(addon_static, {"desired": {
	"mode": "standalone",
	"docs": {"kai_values": "clusters/a/kai-values.yaml", "nvca_values": "clusters/a/nvca.yaml", "config": "kai-gitops.yaml"},
	"stack_kai_version": null,
	"addons": {"kaiScheduler": false},
	"addons_doc": null,
	"standalone_kai": true,
	"kai_values_doc": "kai_values",
	"kai_values_user": canonical_values,
	"gates": {
		"doc": "nvca_values",
		"path": ["selfManaged", "featureGateValues"],
		"user": standalone_gates,
		"effective": standalone_gates,
		"enabled": sort(standalone_gates),
		"disabled": [],
	},
}})

# Gate facts as Python computes them, for a user list in standalone mode (effective == user).
with_gates(base, user, enabled, disabled) := object.union(base, {"desired": {"gates": {
	"user": user, "effective": user, "enabled": enabled, "disabled": disabled,
}}})

live_part := {
	"queue_kind_served": true,
	"crds": {
		"queues.scheduling.run.ai": true, "schedulingshards.kai.scheduler": true,
		"podgroups.scheduling.run.ai": true, "topologies.kai.scheduler": true, "nvcfbackends.nvcf.nvidia.io": true,
	},
	"queues": [
		{"name": "default-parent-queue", "parent": null, "has_resources": true, "resources": unlimited_resources},
		{"name": "default-queue", "parent": "default-parent-queue", "has_resources": true, "resources": unlimited_resources},
	],
	"nvca_prediction": {"status": "healthy", "errors": []},
	"healthz": {"reachable": true, "http_status": 200, "status": "healthy", "errors": []},
	"releases": [{
		"name": "kai-scheduler", "namespace": "kai-scheduler", "revision": 1, "status": "deployed",
		"latest_revision": 1, "latest_status": "deployed",
		"chart_name": "kai-scheduler", "chart_version": "v0.16.7",
	}],
	"release_errors": [],
	"gate_hops": {
		"configmap": addon_gates,
		"spec": [g | some g in addon_gates; g != "DynamicGPUDiscovery"],
		"overrides": null,
		"status": [g | some g in addon_gates; g != "DynamicGPUDiscovery"],
	},
	"backend": {"count": 1, "name": "nvcf-backend", "namespace": "nvca-operator", "agent_status": "healthy"},
	"nodes": {"total": 3, "schedule_label": [], "schedule_label_count": 0, "schedule_true": []},
	"nvcf_pods": {
		"total": 2, "queues_used": ["default-queue"], "not_on_kai": [], "not_on_kai_count": 0,
		"missing_queue_label": [], "missing_queue_label_count": 0, "pending": [], "pending_count": 0,
	},
	"kai_pods": [{"name": "kai-scheduler-default-0", "ready": true, "phase": "Running"}],
}

live_ok := object.union(addon_static, {"scope": "live", "live": live_part})

# object.union merges objects but replaces arrays, so list facts are swapped wholesale.
with_live(changes) := object.union(live_ok, {"live": changes})

shared_intent(nodes) := {"desired": {"shared_cluster": {"intent": "shared", "nodes": nodes, "selector": null}}}

# Replaces (not merges) the user and effective KAI values, since object.union cannot delete keys.
with_kai_values(base, user, effective) := object.union(object.remove(base, ["desired"]), {"desired": object.union(
	object.remove(base.desired, ["kai_values_user", "kai_values_effective"]),
	{"kai_values_user": user, "kai_values_effective": effective},
)})
