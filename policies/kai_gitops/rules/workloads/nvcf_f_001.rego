package kai_gitops.rules.workloads.nvcf_f_001

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-001",
	"title": "Every object of a function chart is a type NVCA passes through on the cluster",
	"severity": "error",
	"scope": "static",
	"rationale": "NVCA renders a Helm function and admits only core types plus the cluster's allowedExtraKubernetesTypes (exact group, version and kind); anything else fails the whole deployment with 'unsupported types: [...]'. The add-on stack appends PodGroup with the KAI add-on, the Grove kinds with the Grove add-on and the v1alpha1 Dynamo kinds with the Dynamo add-on.",
	"remediation": "Enable the add-on that brings the type (addons.kaiScheduler / groveOperator / dynamoOperator), or list the type under agentConfig.mergeConfig cluster.validationPolicy.allowedExtraKubernetesTypes, or remove the object from the chart.",
	"source": "docs/workloads.md#nvcf-f-001-types-nvca-passes-through",
}

# NVCA's error lists every refused object of the render, in order, as Go's %q writes a string list.
nvca_error(w) := sprintf("unsupported types: [%s]", [concat(" ", [json.marshal(o.gvk) |
	some o in workloads.objects
	o.workload == w
	not o.gvk in workloads.admitted
])])

violations contains v if {
	some o in workloads.objects
	not o.gvk in workloads.admitted
	v := {
		"message": sprintf("workload %s: NVCA will refuse to deploy it on this cluster, %s %s is not a type it passes through; NVCA's error: %s; %s", [o.workload, o.kind, o.name, data.kai_gitops.rules.workloads.nvcf_f_001.nvca_error(o.workload), data.kai_gitops.rules.workloads.nvcf_f_001.remedy(o)]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": ["kind"],
		"fix": null,
	}
}

remedy(o) := "NVCA passes only nvidia.com/v1alpha1 Dynamo kinds: write apiVersion: nvidia.com/v1alpha1" if {
	data.kai_gitops.lib.workloads.is_dynamo(o)
	o.apiVersion != "nvidia.com/v1alpha1"
} else := sprintf("enable addons.%s.enabled in %s", [addon, workloads.offer.types_file]) if {
	workloads.offer.mode == "addon"
	addon := data.kai_gitops.rules.workloads.nvcf_f_001.addon_for(o)
} else := sprintf("add {group: %s, version: %s, kind: %s} to cluster.validationPolicy.allowedExtraKubernetesTypes in agentConfig.mergeConfig of the NVCA values, or remove it from the chart", [data.kai_gitops.lib.workloads.group(o), data.kai_gitops.lib.workloads.version(o), o.kind])

addon_for(o) := "kaiScheduler" if data.kai_gitops.lib.workloads.is_podgroup(o)

addon_for(o) := "groveOperator" if data.kai_gitops.lib.workloads.is_grove(o)

addon_for(o) := "dynamoOperator" if data.kai_gitops.lib.workloads.is_dynamo(o)
