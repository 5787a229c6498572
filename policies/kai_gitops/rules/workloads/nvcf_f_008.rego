package kai_gitops.rules.workloads.nvcf_f_008

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-008",
	"title": "Grove topology constraints name the cluster's binding and domains, children no wider than parents",
	"severity": "error",
	"scope": "static",
	"rationale": "Grove's admission refuses a PodCliqueSet whose topologyName is not a ClusterTopologyBinding, whose pack domain is not one of the binding's, whose clique or scaling-group domain is wider than its parent's, or that uses the deprecated packDomain; a constraint needs pack.required or pack.preferred. All topologyName values of one PodCliqueSet must be equal.",
	"remediation": "Use topologyName: nvcf-mnnvl-topology-binding (the stack's binding) with pack.required: gpuclique, and give children the same or a narrower domain (gpuclique, then hostname).",
	"source": "docs/workloads.md#nvcf-f-008-grove-topology-constraints",
}

pcs_constraints contains [o, c] if {
	object.get(workloads.offer, "topology_aware", false) == true
	object.get(workloads.offer, "grove", false) == true
	some o in workloads.objects
	data.kai_gitops.lib.workloads.is_pcs(o)
	some c in data.kai_gitops.lib.workloads.grove_constraints(o)
}

# The binding a constraint uses: its own topologyName, else the PodCliqueSet's (inherited).
binding_of(o, c) := name if {
	name := object.get(c.tc, "topologyName", null)
	is_string(name)
} else := name if {
	name := object.get(o, ["spec", "template", "topologyConstraint", "topologyName"], null)
	is_string(name)
}

required_domain(c) := d if {
	d := object.get(c.tc, ["pack", "required"], null)
	is_string(d)
} else := d if {
	d := object.get(c.tc, "packDomain", null)
	is_string(d)
}

violations contains v if {
	some pc in pcs_constraints
	o := pc[0]
	c := pc[1]
	problem := data.kai_gitops.rules.workloads.nvcf_f_008.shape_problem(c)
	v := data.kai_gitops.rules.workloads.nvcf_f_008.f008_finding(o, c, problem[0], problem[1])
}

shape_problem(c) := ["uses packDomain: packDomain is deprecated and cannot be used on new workloads; use pack.required", ["packDomain"]] if {
	object.get(c.tc, "packDomain", null) != null
} else := ["topologyConstraint must specify pack or deprecated packDomain; set pack.required", []] if {
	not is_object(object.get(c.tc, "pack", null))
} else := ["pack sets neither required nor preferred; set pack.required", ["pack"]] if {
	object.get(c.tc, ["pack", "required"], null) == null
	object.get(c.tc, ["pack", "preferred"], null) == null
}

violations contains v if {
	some pc in pcs_constraints
	o := pc[0]
	c := pc[1]
	not data.kai_gitops.rules.workloads.nvcf_f_008.binding_of(o, c)
	v := data.kai_gitops.rules.workloads.nvcf_f_008.f008_finding(o, c, sprintf("topologyName is required when topologyConstraint is set and cannot be inherited; set topologyName: %s", [data.kai_gitops.rules.workloads.nvcf_f_008.bindings_text]), [])
}

violations contains v if {
	some pc in pcs_constraints
	o := pc[0]
	c := pc[1]
	name := data.kai_gitops.rules.workloads.nvcf_f_008.binding_of(o, c)
	not workloads.bindings[name]
	v := data.kai_gitops.rules.workloads.nvcf_f_008.f008_finding(o, c, sprintf("ClusterTopologyBinding %s not found on this cluster (it has: %s)", [json.marshal(name), data.kai_gitops.rules.workloads.nvcf_f_008.bindings_text]), ["topologyName"])
}

violations contains v if {
	some pc in pcs_constraints
	o := pc[0]
	c := pc[1]
	c.parent != null
	name := object.get(c.tc, "topologyName", null)
	top := object.get(o, ["spec", "template", "topologyConstraint", "topologyName"], null)
	is_string(name)
	is_string(top)
	name != top
	v := data.kai_gitops.rules.workloads.nvcf_f_008.f008_finding(o, c, sprintf("topologyName %s differs from the PodCliqueSet's %s; all topologyName values of one PodCliqueSet must be equal", [json.marshal(name), json.marshal(top)]), ["topologyName"])
}

violations contains v if {
	some pc in pcs_constraints
	o := pc[0]
	c := pc[1]
	domains := workloads.bindings[data.kai_gitops.rules.workloads.nvcf_f_008.binding_of(o, c)]
	some key in ["required", "preferred"]
	d := object.get(c.tc, ["pack", key], null)
	is_string(d)
	not d in domains
	v := data.kai_gitops.rules.workloads.nvcf_f_008.f008_finding(o, c, sprintf("topology domain '%s' does not exist in cluster topology [%s]", [d, concat(", ", domains)]), ["pack", key])
}

# A child's required domain wider than its parent's: a lower index in the binding's broadest-first levels.
violations contains v if {
	some pc in pcs_constraints
	o := pc[0]
	c := pc[1]
	c.parent != null
	some parent in data.kai_gitops.lib.workloads.grove_constraints(o)
	parent.where == c.parent
	domains := workloads.bindings[data.kai_gitops.rules.workloads.nvcf_f_008.binding_of(o, c)]
	child_domain := data.kai_gitops.rules.workloads.nvcf_f_008.required_domain(c)
	parent_domain := data.kai_gitops.rules.workloads.nvcf_f_008.required_domain(parent)
	some ci
	domains[ci] == child_domain
	some pi
	domains[pi] == parent_domain
	ci < pi
	v := data.kai_gitops.rules.workloads.nvcf_f_008.f008_finding(o, c, sprintf("requires domain '%s', wider than %s's '%s': Grove refuses it (%s's topology constraint domain '%s' is narrower than '%s'); use '%s' or a narrower domain", [child_domain, parent.where, parent_domain, parent.where, parent_domain, child_domain, parent_domain]), ["pack", "required"])
}

bindings_text := workloads.binding_names if count(workloads.bindings) > 0

bindings_text := "none" if count(workloads.bindings) == 0

f008_finding(o, c, problem, rest) := {
	"message": sprintf("workload %s: PodCliqueSet %s, %s: %s", [o.workload, o.name, c.where, problem]),
	"subject": data.kai_gitops.lib.workloads.subject(o),
	"doc": o.doc,
	"path": array.concat(c.path, rest),
	"fix": null,
}
