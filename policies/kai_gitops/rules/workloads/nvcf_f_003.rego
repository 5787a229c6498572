package kai_gitops.rules.workloads.nvcf_f_003

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-003",
	"title": "A function chart's gang and topology objects have their add-ons on the cluster",
	"severity": "error",
	"scope": "static",
	"rationale": "A PodGroup needs KAI, Grove kinds need the Grove operator, Dynamo kinds the Dynamo operator, and a topology annotation or constraint needs topology-aware scheduling (the stack installs the Topology only with it). A type NVCA admits through the operator's own allowedExtraKubernetesTypes still does nothing when nothing runs it.",
	"remediation": "Enable the add-on the object needs in the cluster's environment file (addons.<name>.enabled: true), or deploy the function to a cluster that has it.",
	"source": "docs/workloads.md#nvcf-f-003-add-on-dependencies",
}

needs(o) := ["kaiScheduler", "KAI Scheduler", "kai"] if data.kai_gitops.lib.workloads.is_podgroup(o)

needs(o) := ["groveOperator", "the Grove operator", "grove"] if data.kai_gitops.lib.workloads.is_grove(o)

needs(o) := ["dynamoOperator", "the Dynamo operator", "dynamo"] if data.kai_gitops.lib.workloads.is_dynamo(o)

# Kinds NVCA admits whose operator is off (a refused kind is NVCF-F-001's).
violations contains v if {
	some o in workloads.objects
	o.gvk in workloads.admitted
	need := data.kai_gitops.rules.workloads.nvcf_f_003.needs(o)
	object.get(workloads.offer, need[2], false) != true
	v := {
		"message": sprintf("workload %s: %s %s needs %s, which this cluster does not run; enable addons.%s.enabled", [o.workload, o.kind, o.name, need[1], need[0]]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": ["kind"],
		"fix": null,
	}
}

violations contains v if {
	object.get(workloads.offer, "topology_aware", false) != true
	some o in workloads.objects
	path := data.kai_gitops.rules.workloads.nvcf_f_003.topology_ask(o)
	v := {
		"message": sprintf("workload %s: %s %s asks for topology-aware placement, but topology-aware scheduling is off on this cluster (addons.topologyAwareScheduling.enabled with addons.kaiScheduler.enabled), so no Topology exists for it; enable it, or drop the topology request", [o.workload, o.kind, o.name]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": path,
		"fix": null,
	}
}

# Where an object asks for topology: its first topology annotation, else its topology constraint.
topology_ask(o) := ["metadata", "annotations", k] if {
	keys := [key | some key in object.keys(data.kai_gitops.lib.workloads.annotations(o)); data.kai_gitops.lib.workloads.topology_key(key)]
	count(keys) > 0
	k := sort(keys)[0]
} else := ["spec", "topologyConstraint"] if {
	data.kai_gitops.lib.workloads.is_podgroup(o)
	is_object(object.get(o, ["spec", "topologyConstraint"], null))
} else := ["spec", "template", "topologyConstraint"] if {
	data.kai_gitops.lib.workloads.is_pcs(o)
	count(data.kai_gitops.lib.workloads.grove_constraints(o)) > 0
} else := ["spec", "topologyConstraint"] if {
	data.kai_gitops.lib.workloads.is_dgd(o)
	is_object(object.get(o, ["spec", "topologyConstraint"], null))
}
