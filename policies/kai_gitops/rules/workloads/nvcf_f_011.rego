package kai_gitops.rules.workloads.nvcf_f_011

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-011",
	"title": "A Topology manifest passes the Topology CRD's own rules",
	"severity": "error",
	"scope": "static",
	"rationale": "The KAI Topology CRD takes 1 to 16 levels, ordered widest to narrowest, with unique nodeLabels and kubernetes.io/hostname only as the last level; aliases (v0.17.0 and later only) must be unique and differ from every nodeLabel. A Topology the API server refuses leaves every workload naming it Pending.",
	"remediation": "List 1 to 16 levels with distinct node labels, kubernetes.io/hostname last (e.g. nvidia.com/gpu.clique then kubernetes.io/hostname).",
	"source": "docs/workloads.md#nvcf-f-011-topology-manifests",
}

topologies contains o if {
	some o in workloads.objects
	data.kai_gitops.lib.workloads.is_topology(o)
}

levels(o) := lv if {
	lv := object.get(o, ["spec", "levels"], [])
	is_array(lv)
} else := []

violations contains v if {
	some o in topologies
	n := count(data.kai_gitops.rules.workloads.nvcf_f_011.levels(o))
	not n >= 1
	v := data.kai_gitops.rules.workloads.nvcf_f_011.f011_finding(o, "has no spec.levels; a Topology needs 1 to 16 levels", ["spec", "levels"])
}

violations contains v if {
	some o in topologies
	n := count(data.kai_gitops.rules.workloads.nvcf_f_011.levels(o))
	n > 16
	v := data.kai_gitops.rules.workloads.nvcf_f_011.f011_finding(o, sprintf("has %v levels; a Topology takes at most 16", [n]), ["spec", "levels"])
}

violations contains v if {
	some o in topologies
	lv := data.kai_gitops.rules.workloads.nvcf_f_011.levels(o)
	some i
	label := object.get(lv[i], "nodeLabel", null)
	count([j | some j; object.get(lv[j], "nodeLabel", null) == label; j < i]) > 0
	v := data.kai_gitops.rules.workloads.nvcf_f_011.f011_finding(o, sprintf("lists nodeLabel %v twice: nodeLabel must be unique", [json.marshal(label)]), ["spec", "levels", i, "nodeLabel"])
}

violations contains v if {
	some o in topologies
	lv := data.kai_gitops.rules.workloads.nvcf_f_011.levels(o)
	some i
	object.get(lv[i], "nodeLabel", null) == "kubernetes.io/hostname"
	i < count(lv) - 1
	v := data.kai_gitops.rules.workloads.nvcf_f_011.f011_finding(o, "uses kubernetes.io/hostname above the last level: the kubernetes.io/hostname label can only be used at the lowest level of topology", ["spec", "levels", i, "nodeLabel"])
}

violations contains v if {
	some o in topologies
	lv := data.kai_gitops.rules.workloads.nvcf_f_011.levels(o)
	some i
	alias := object.get(lv[i], "alias", null)
	alias != null
	problem := data.kai_gitops.rules.workloads.nvcf_f_011.alias_problem(lv, i, alias)
	v := data.kai_gitops.rules.workloads.nvcf_f_011.f011_finding(o, problem, ["spec", "levels", i, "alias"])
}

alias_problem(lv, i, alias) := sprintf("sets alias %v, which the cluster's KAI %v does not have (aliases came in v0.17.0)", [json.marshal(alias), object.get(workloads.offer, "kai_version", "")]) if {
	not data.kai_gitops.lib.workloads.feature("topology_alias")
} else := sprintf("alias %v equals a nodeLabel: invalid topology aliases", [json.marshal(alias)]) if {
	some lvl in lv
	object.get(lvl, "nodeLabel", null) == alias
} else := sprintf("alias %v is used twice: invalid topology aliases", [json.marshal(alias)]) if {
	count([j | some j; object.get(lv[j], "alias", null) == alias; j < i]) > 0
}

f011_finding(o, problem, path) := {
	"message": sprintf("workload %s: Topology %s %s", [o.workload, o.name, problem]),
	"subject": data.kai_gitops.lib.workloads.subject(o),
	"doc": o.doc,
	"path": path,
	"fix": null,
}
