package kai_gitops.rules.workloads.nvcf_f_009

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-009",
	"title": "Grove minAvailable is within its replicas",
	"severity": "error",
	"scope": "static",
	"rationale": "Grove's admission refuses a PodClique minAvailable of 0 or above its replicas, and a PodCliqueScalingGroup minAvailable of 0, above its replicas (default 1) or above scaleConfig.minReplicas: minAvailable is the gang's scale_floor, whose breach terminates the PodGang.",
	"remediation": "Set minAvailable between 1 and replicas (and no higher than scaleConfig.minReplicas for a scaling group), or leave it out (a clique defaults it to its replicas).",
	"source": "docs/workloads.md#nvcf-f-009-grove-minavailable",
}

pcs_objects contains o if {
	some o in workloads.objects
	data.kai_gitops.lib.workloads.is_pcs(o)
}

violations contains v if {
	some o in pcs_objects
	cliques := data.kai_gitops.lib.workloads.pcs_list(o, "cliques")
	some i
	spec := object.get(cliques[i], "spec", {})
	minimum := object.get(spec, "minAvailable", null)
	is_number(minimum)
	replicas := object.get(spec, "replicas", 1)
	problem := data.kai_gitops.rules.workloads.nvcf_f_009.bound_problem(minimum, replicas, null)
	v := data.kai_gitops.rules.workloads.nvcf_f_009.f009_finding(o, sprintf("clique %v", [object.get(cliques[i], "name", i)]), problem, ["spec", "template", "cliques", i, "spec", "minAvailable"])
}

violations contains v if {
	some o in pcs_objects
	groups := data.kai_gitops.lib.workloads.pcs_list(o, "podCliqueScalingGroups")
	some i
	minimum := object.get(groups[i], "minAvailable", null)
	is_number(minimum)
	problem := data.kai_gitops.rules.workloads.nvcf_f_009.bound_problem(minimum, object.get(groups[i], "replicas", 1), object.get(groups[i], ["scaleConfig", "minReplicas"], null))
	v := data.kai_gitops.rules.workloads.nvcf_f_009.f009_finding(o, sprintf("scaling group %v", [object.get(groups[i], "name", i)]), problem, ["spec", "template", "podCliqueScalingGroups", i, "minAvailable"])
}

bound_problem(minimum, replicas, scale_floor) := sprintf("minAvailable %v must be greater than 0", [minimum]) if {
	minimum < 1
} else := sprintf("minAvailable %v: minAvailable must not be greater than replicas (%v)", [minimum, replicas]) if {
	is_number(replicas)
	minimum > replicas
} else := sprintf("minAvailable %v: scaleConfig.minReplicas must be greater than or equal to minAvailable (it is %v)", [minimum, scale_floor]) if {
	is_number(scale_floor)
	minimum > scale_floor
}

f009_finding(o, where, problem, path) := {
	"message": sprintf("workload %s: PodCliqueSet %s, %s: %s", [o.workload, o.name, where, problem]),
	"subject": data.kai_gitops.lib.workloads.subject(o),
	"doc": o.doc,
	"path": path,
	"fix": null,
}
