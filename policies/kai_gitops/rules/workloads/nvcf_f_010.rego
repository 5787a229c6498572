package kai_gitops.rules.workloads.nvcf_f_010

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-010",
	"title": "A DynamoGraphDeployment's topology profile and pack domains are the cluster's",
	"severity": "error",
	"scope": "static",
	"rationale": "The Dynamo operator turns a DynamoGraphDeployment into Grove objects: spec.topologyConstraint.topologyProfile names the Grove ClusterTopologyBinding and every packDomain must be one of its domains (pattern ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$); a service constraint needs a packDomain and a profile at spec level. Function authors create no PodGroup or PodGang for a DGD.",
	"remediation": "Set spec.topologyConstraint: {topologyProfile: nvcf-mnnvl-topology-binding, packDomain: gpuclique} and give each constrained service a packDomain of that binding; remove PodGroup/PodGang objects from a Dynamo chart.",
	"source": "docs/workloads.md#nvcf-f-010-dynamo-topology",
}

dgds contains o if {
	object.get(workloads.offer, "topology_aware", false) == true
	object.get(workloads.offer, "dynamo", false) == true
	some o in workloads.objects
	data.kai_gitops.lib.workloads.is_dgd(o)
}

profile(o) := object.get(o, ["spec", "topologyConstraint", "topologyProfile"], null)

# Every packDomain of the DGD: [path, domain].
domains(o) := array.concat(
	[[["spec", "topologyConstraint", "packDomain"], d] | d := object.get(o, ["spec", "topologyConstraint", "packDomain"], null); d != null],
	[[["spec", "services", s, "topologyConstraint", "packDomain"], d] |
		services := object.get(o, ["spec", "services"], {})
		is_object(services)
		some s in object.keys(services)
		d := object.get(services[s], ["topologyConstraint", "packDomain"], null)
		d != null
	],
)

violations contains v if {
	some o in dgds
	name := data.kai_gitops.rules.workloads.nvcf_f_010.profile(o)
	name != null
	not workloads.bindings[name]
	v := data.kai_gitops.rules.workloads.nvcf_f_010.f010_finding(o, sprintf("topologyProfile %v is not a ClusterTopologyBinding of this cluster (it has: %s)", [json.marshal(name), data.kai_gitops.rules.workloads.nvcf_f_010.bindings_text]), ["spec", "topologyConstraint", "topologyProfile"])
}

violations contains v if {
	some o in dgds
	some pd in data.kai_gitops.rules.workloads.nvcf_f_010.domains(o)
	not regex.match(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`, sprintf("%v", [pd[1]]))
	v := data.kai_gitops.rules.workloads.nvcf_f_010.f010_finding(o, sprintf("packDomain %v is not a domain name (lower-case letters, digits and dashes)", [json.marshal(pd[1])]), pd[0])
}

violations contains v if {
	some o in dgds
	domains := workloads.bindings[data.kai_gitops.rules.workloads.nvcf_f_010.profile(o)]
	some pd in data.kai_gitops.rules.workloads.nvcf_f_010.domains(o)
	not pd[1] in domains
	v := data.kai_gitops.rules.workloads.nvcf_f_010.f010_finding(o, sprintf("packDomain %v is not a domain of %v (it has: %s)", [json.marshal(pd[1]), data.kai_gitops.rules.workloads.nvcf_f_010.profile(o), concat(", ", domains)]), pd[0])
}

violations contains v if {
	some o in dgds
	services := object.get(o, ["spec", "services"], {})
	is_object(services)
	some s in object.keys(services)
	tc := object.get(services[s], "topologyConstraint", null)
	is_object(tc)
	problem := data.kai_gitops.rules.workloads.nvcf_f_010.service_problem(o, tc)
	v := data.kai_gitops.rules.workloads.nvcf_f_010.f010_finding(o, sprintf("service %s: %s", [s, problem]), ["spec", "services", s, "topologyConstraint"])
}

service_problem(o, tc) := "its topologyConstraint has no packDomain, which a service constraint requires; set packDomain: gpuclique" if {
	object.get(tc, "packDomain", null) == null
} else := "it sets a topologyConstraint but spec.topologyConstraint.topologyProfile is not set; set topologyProfile: nvcf-mnnvl-topology-binding" if {
	data.kai_gitops.rules.workloads.nvcf_f_010.profile(o) == null
}

violations contains v if {
	some o in dgds
	some other in workloads.objects
	other.workload == o.workload
	other.kind in {"PodGroup", "PodGang"}
	v := {
		"message": sprintf("workload %s: %s %s is created by hand next to DynamoGraphDeployment %s; the Dynamo operator and Grove create the gang for a DGD, so remove it", [other.workload, other.kind, other.name, o.name]),
		"subject": data.kai_gitops.lib.workloads.subject(other),
		"doc": other.doc,
		"path": ["kind"],
		"fix": null,
	}
}

bindings_text := workloads.binding_names if count(workloads.bindings) > 0

bindings_text := "none" if count(workloads.bindings) == 0

f010_finding(o, problem, path) := {
	"message": sprintf("workload %s: DynamoGraphDeployment %s: %s", [o.workload, o.name, problem]),
	"subject": data.kai_gitops.lib.workloads.subject(o),
	"doc": o.doc,
	"path": path,
	"fix": null,
}
