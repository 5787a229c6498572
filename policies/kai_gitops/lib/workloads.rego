# Helpers for the function-chart rules (NVCF-F-*): the objects of the charts a cluster runs
# (input.desired.workloads.objects) and what that cluster offers them (input.desired.workloads.context).
package kai_gitops.lib.workloads

import data.kai_gitops.lib.util

section := object.get(util.desired, "workloads", {})

offer := object.get(section, "context", {})

objects := object.get(section, "objects", [])

# Types NVCA's chart validation (ReVal checkTypes) always admits, as its error writes them: the core group
# of v1 is written "core". ServiceAccount, Role and RoleBinding are tolerated with a log line.
core_types := {
	"core/v1.Pod", "apps/v1.Deployment", "apps/v1.ReplicaSet", "apps/v1.StatefulSet", "batch/v1.Job",
	"batch/v1.CronJob", "core/v1.Service", "core/v1.ConfigMap", "core/v1.Secret", "core/v1.PersistentVolumeClaim",
	"core/v1.ServiceAccount", "rbac.authorization.k8s.io/v1.Role", "rbac.authorization.k8s.io/v1.RoleBinding",
}

admitted := core_types | {t | some t in object.get(offer, "allowed_types", [])}

subject(o) := {"apiVersion": o.apiVersion, "kind": o.kind, "namespace": o.namespace, "name": o.name}

group(o) := split(o.apiVersion, "/")[0] if contains(o.apiVersion, "/")

group(o) := "" if not contains(o.apiVersion, "/")

is_podgroup(o) if {
	o.apiVersion == "scheduling.run.ai/v2alpha2"
	o.kind == "PodGroup"
}

is_grove(o) if group(o) in {"grove.io", "scheduler.grove.io"}

is_pcs(o) if {
	o.apiVersion == "grove.io/v1alpha1"
	o.kind == "PodCliqueSet"
}

is_dynamo(o) if {
	group(o) == "nvidia.com"
	startswith(o.kind, "Dynamo")
}

is_dgd(o) if {
	is_dynamo(o)
	o.kind == "DynamoGraphDeployment"
}

is_topology(o) if {
	o.apiVersion == "kai.scheduler/v1alpha1"
	o.kind == "Topology"
}

# Owners of a pod template, and where the template sits in their spec.
template_path := {
	"Deployment": ["spec", "template"], "StatefulSet": ["spec", "template"], "ReplicaSet": ["spec", "template"],
	"Job": ["spec", "template"], "CronJob": ["spec", "jobTemplate", "spec", "template"],
}

pod_template_owner(o) if {
	group(o) in {"apps", "batch"}
	template_path[o.kind]
}

annotations(o) := object.get(o, ["metadata", "annotations"], {})

template_annotations(o) := object.get(o, array.concat(template_path[o.kind], ["metadata", "annotations"]), {})

template_annotations_path(o) := array.concat(template_path[o.kind], ["metadata", "annotations"])

topology_keys := {
	"kai.scheduler/topology", "kai.scheduler/topology-required-placement", "kai.scheduler/topology-preferred-placement",
}

placement_keys := {"kai.scheduler/topology-required-placement", "kai.scheduler/topology-preferred-placement"}

# A kai.scheduler/topology* annotation key (the segment annotations included).
topology_key(k) if startswith(k, "kai.scheduler/topology")

topology_key(k) if startswith(k, "kai.scheduler/segment-topology")

asks_topology(o) if {
	some k in object.keys(annotations(o))
	topology_key(k)
}

asks_topology(o) if {
	pod_template_owner(o)
	some k in object.keys(template_annotations(o))
	topology_key(k)
}

replicas(o) := object.get(o, ["spec", "replicas"], 1)

# Topologies the cluster has: the stack's (add-on, topology-aware scheduling on) and Topology objects the
# cluster's function charts themselves declare (the first of one name wins: no conflicting definitions).
topology_entries := array.concat(
	[{"name": t.name, "levels": t.levels} | some t in object.get(offer, "topologies", []); is_string(t.name); is_array(t.levels)],
	[{"name": o.name, "levels": lv} | some o in objects; is_topology(o); lv := object.get(o, ["spec", "levels"], []); is_array(lv)],
)

topologies := {n: levels |
	some n in {e.name | some e in topology_entries}
	levels := [e.levels | some e in topology_entries; e.name == n][0]
}

# Level names a workload may use: node labels, and aliases where the pinned KAI reads them (v0.17.0+).
topology_levels(name) := {lv.nodeLabel | some lv in topologies[name]; is_string(lv.nodeLabel)} | {lv.alias |
	some lv in topologies[name]
	is_string(lv.alias)
	feature("topology_alias")
}

# The Grove ClusterTopologyBindings the stack derives from its topologies: name -> ordered domains.
bindings := {name: domains |
	some b in object.get(offer, "bindings", [])
	name := b.name
	domains := [lv.domain | some lv in b.levels]
}

binding_names := concat(", ", sort(object.keys(bindings)))

topology_names := concat(", ", sort(object.keys(topologies)))

# What the pinned KAI version reads (computed in Python: Rego has no portable version comparison).
feature(name) if object.get(offer, ["kai_features", name], false) == true

quoted(items) := concat(", ", [json.marshal(i) | some i in items])

version(o) := split(o.apiVersion, "/")[1] if contains(o.apiVersion, "/")

version(o) := o.apiVersion if not contains(o.apiVersion, "/")

# A workload meant as a gang: it asks for topology placement, or names a PodGroup for its pods.
asks_gang(o) if asks_topology(o)

asks_gang(o) if {
	pod_template_owner(o)
	"pod-group-name" in object.keys(template_annotations(o))
}

# A PodCliqueSet's topology constraints: {where, path, constraint, parent where (null at the top)}.
grove_constraints(o) := [c |
	some c in array.concat(array.concat(pcs_top_constraint(o), pcs_clique_constraints(o)), pcs_group_constraints(o))
]

pcs_top_constraint(o) := [{"where": "the PodCliqueSet", "path": ["spec", "template", "topologyConstraint"], "tc": tc, "parent": null} |
	tc := object.get(o, ["spec", "template", "topologyConstraint"], null)
	is_object(tc)
]

pcs_groups(o) := [g | some g in pcs_list(o, "podCliqueScalingGroups"); is_object(g)]

pcs_list(o, key) := items if {
	items := object.get(o, ["spec", "template", key], [])
	is_array(items)
} else := []

pcs_group_constraints(o) := [{"where": sprintf("scaling group %v", [object.get(g, "name", i)]), "path": ["spec", "template", "podCliqueScalingGroups", i, "topologyConstraint"], "tc": g.topologyConstraint, "parent": "the PodCliqueSet"} |
	groups := pcs_list(o, "podCliqueScalingGroups")
	some i
	g := groups[i]
	is_object(object.get(g, "topologyConstraint", null))
]

pcs_clique_constraints(o) := [{"where": sprintf("clique %v", [object.get(c, "name", i)]), "path": ["spec", "template", "cliques", i, "topologyConstraint"], "tc": c.topologyConstraint, "parent": clique_parent(o, object.get(c, "name", ""))} |
	cliques := pcs_list(o, "cliques")
	some i
	c := cliques[i]
	is_object(object.get(c, "topologyConstraint", null))
]

# The constraint a clique is nested in: its scaling group's (when it has one), else the PodCliqueSet's.
clique_parent(o, name) := sprintf("scaling group %v", [g.name]) if {
	some g in pcs_groups(o)
	name in object.get(g, "cliqueNames", [])
	is_object(object.get(g, "topologyConstraint", null))
} else := "the PodCliqueSet"
