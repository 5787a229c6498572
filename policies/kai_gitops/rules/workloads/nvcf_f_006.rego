package kai_gitops.rules.workloads.nvcf_f_006

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-006",
	"title": "Topology and level references name a Topology of the cluster and one of its levels",
	"severity": "error",
	"scope": "static",
	"rationale": "KAI looks the topology up by name and the level among the Topology's node labels (or, from v0.17.0, their aliases); a name or level the cluster does not have leaves the gang Pending ('Requested topology X does not exist', 'the topology tree does not contain a level with this name'). A placement annotation without kai.scheduler/topology is ignored.",
	"remediation": "Name a Topology the cluster has (add-on stack: addons.topologyAwareScheduling.topologies, e.g. nvcf-mnnvl-topology) and one of its levels (e.g. nvidia.com/gpu.clique).",
	"source": "docs/workloads.md#nvcf-f-006-topology-and-level-references",
}

# (object, topology name or null, [level key, level] pairs, path of the name) of every topology request.
requests contains [o, object.get(ann, "kai.scheduler/topology", null), levels, ["metadata", "annotations", "kai.scheduler/topology"]] if {
	some o in workloads.objects
	ann := data.kai_gitops.lib.workloads.annotations(o)
	levels := [[k, ann[k]] | some k in object.keys(ann); k in workloads.placement_keys]
	some k in object.keys(ann)
	k in workloads.topology_keys
}

requests contains [o, object.get(tc, "topology", null), levels, ["spec", "topologyConstraint", "topology"]] if {
	some o in workloads.objects
	data.kai_gitops.lib.workloads.is_podgroup(o)
	tc := object.get(o, ["spec", "topologyConstraint"], null)
	is_object(tc)
	levels := [[k, tc[k]] | some k in ["requiredTopologyLevel", "preferredTopologyLevel"]; is_string(object.get(tc, k, null))]
}

violations contains v if {
	object.get(workloads.offer, "topology_aware", false) == true
	some r in requests
	o := r[0]
	name := r[1]
	path := r[3]
	is_string(name)
	not workloads.topologies[name]
	v := {
		"message": sprintf("workload %s: %s %s names Topology %s, which this cluster does not have (it has: %s); the gang stays Pending with 'Requested topology %s does not exist'", [o.workload, o.kind, o.name, json.marshal(name), data.kai_gitops.rules.workloads.nvcf_f_006.known, name]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": path,
		"fix": null,
	}
}

violations contains v if {
	object.get(workloads.offer, "topology_aware", false) == true
	some r in requests
	o := r[0]
	name := r[1]
	levels := r[2]
	path := r[3]
	is_string(name)
	workloads.topologies[name]
	some pair in levels
	not pair[1] in data.kai_gitops.lib.workloads.topology_levels(name)
	v := {
		"message": sprintf("workload %s: %s %s asks for level %s (%s) of Topology %s, which has only %s; use one of those", [o.workload, o.kind, o.name, json.marshal(pair[1]), pair[0], name, data.kai_gitops.lib.workloads.quoted(sort(data.kai_gitops.lib.workloads.topology_levels(name)))]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": array.concat(array.slice(path, 0, count(path) - 1), [pair[0]]),
		"fix": null,
	}
}

violations contains v if {
	object.get(workloads.offer, "topology_aware", false) == true
	some r in requests
	o := r[0]
	name := r[1]
	levels := r[2]
	path := r[3]
	not is_string(name)
	count(levels) > 0
	v := {
		"message": sprintf("workload %s: %s %s sets %s without a topology name, so KAI ignores it; add %s naming the cluster's Topology (%s)", [o.workload, o.kind, o.name, levels[0][0], path[count(path) - 1], data.kai_gitops.rules.workloads.nvcf_f_006.known]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": array.slice(path, 0, count(path) - 1),
		"fix": null,
	}
}

known := workloads.topology_names if count(workloads.topologies) > 0

known := "none" if count(workloads.topologies) == 0
