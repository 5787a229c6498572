package kai_gitops.rules.workloads.nvcf_f_007

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-007",
	"title": "A chart's PodGroup names a Queue the cluster has and has a valid gang shape",
	"severity": "error",
	"scope": "static",
	"rationale": "A PodGroup in a Queue that does not exist stays Pending (QueueDoesNotExist); KAI's admission refuses minMember together with minSubGroup, a minMember below 1, and subgroups whose parent is not there or whose names repeat; minSubGroup exists only from KAI v0.15.3. NVCA creates no PodGroup and sets no minMember for a function: the chart's own PodGroup must be right.",
	"remediation": "Set spec.queue to a Queue the cluster has (for NVCF: default-queue) and exactly one of minMember (at least 1) or minSubGroup, with subgroups whose parents exist.",
	"source": "docs/workloads.md#nvcf-f-007-podgroup-shape",
}

podgroups contains o if {
	some o in workloads.objects
	data.kai_gitops.lib.workloads.is_podgroup(o)
}

violations contains v if {
	some o in podgroups
	queue := object.get(o, ["spec", "queue"], "")
	problem := data.kai_gitops.rules.workloads.nvcf_f_007.queue_problem(queue)
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, problem, ["spec", "queue"])
}

queue_problem(queue) := "has no spec.queue; set spec.queue: default-queue" if {
	not is_string(queue)
} else := "has no spec.queue; set spec.queue: default-queue" if {
	queue == ""
} else := sprintf("names Queue %s, which this cluster does not define (it has: %s), so it stays Pending with QueueDoesNotExist; use default-queue", [json.marshal(queue), concat(", ", object.get(workloads.offer, "queues", []))]) if {
	not queue in object.get(workloads.offer, "queues", [])
}

violations contains v if {
	some o in podgroups
	spec := object.get(o, "spec", {})
	object.get(spec, "minMember", null) != null
	object.get(spec, "minSubGroup", null) != null
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, "sets both minMember and minSubGroup, which KAI refuses (they are mutually exclusive); keep one", ["spec", "minSubGroup"])
}

violations contains v if {
	some o in podgroups
	spec := object.get(o, "spec", {})
	object.get(spec, "minMember", null) == null
	object.get(spec, "minSubGroup", null) == null
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, "sets neither minMember nor minSubGroup, so nothing says how many pods make the gang; set spec.minMember to the gang size", ["spec"])
}

violations contains v if {
	some o in podgroups
	minimum := object.get(o, ["spec", "minMember"], null)
	is_number(minimum)
	minimum < 1
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, sprintf("sets minMember %v; the PodGroup CRD requires at least 1", [minimum]), ["spec", "minMember"])
}

violations contains v if {
	some o in podgroups
	object.get(o, ["spec", "minSubGroup"], null) != null
	not data.kai_gitops.lib.workloads.feature("min_sub_group")
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, sprintf("sets minSubGroup, which the cluster's KAI %v does not have (from v0.15.3); use minMember or upgrade KAI", [object.get(workloads.offer, "kai_version", "")]), ["spec", "minSubGroup"])
}

subgroups(o) := groups if {
	groups := object.get(o, ["spec", "subGroups"], [])
	is_array(groups)
} else := []

violations contains v if {
	some o in podgroups
	groups := data.kai_gitops.rules.workloads.nvcf_f_007.subgroups(o)
	names := [object.get(g, "name", "") | some g in groups]
	some i
	g := groups[i]
	parent := object.get(g, "parent", null)
	is_string(parent)
	parent != ""
	not parent in names
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, sprintf("subgroup %v names parent %v, which is not one of its subgroups (KAI: parent %v of %v was not found)", [object.get(g, "name", i), json.marshal(parent), parent, object.get(g, "name", i)]), ["spec", "subGroups", i, "parent"])
}

violations contains v if {
	some o in podgroups
	groups := data.kai_gitops.rules.workloads.nvcf_f_007.subgroups(o)
	some i
	name := object.get(groups[i], "name", "")
	count([j | some j; object.get(groups[j], "name", "") == name]) > 1
	v := data.kai_gitops.rules.workloads.nvcf_f_007.f007_finding(o, sprintf("has subgroup name %v more than once; KAI refuses duplicate subgroup names", [json.marshal(name)]), ["spec", "subGroups", i, "name"])
}

f007_finding(o, problem, path) := {
	"message": sprintf("workload %s: PodGroup %s %s", [o.workload, o.name, problem]),
	"subject": data.kai_gitops.lib.workloads.subject(o),
	"doc": o.doc,
	"path": path,
	"fix": null,
}
