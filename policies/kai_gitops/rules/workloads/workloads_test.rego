package kai_gitops.tests.workloads

import data.kai_gitops.rules.workloads
import data.kai_gitops.testdata

# The gang patterns done right; the PodGroup is another chart's (a DGD's chart must not carry one).
good := [testdata.gang_statefulset, testdata.grove_pcs, testdata.dynamo_graph, object.union(testdata.pod_group, {"workload": "other"})]

facts(objects) := data.kai_gitops.testdata.workload_facts(objects, {})

bent(objects, offer) := data.kai_gitops.testdata.workload_facts(objects, offer)

obj(api, kind, rest) := data.kai_gitops.testdata.workload_object(api, kind, rest)

sts(rest) := object.union(testdata.gang_statefulset, rest)

pcs_with(template) := object.union(testdata.grove_pcs, {"spec": {"template": template}})

test_good_charts_have_no_findings if {
	tree := data.kai_gitops.rules with input as facts(good)
	hits := [v | some area in object.keys(tree); some rule in object.keys(tree[area]); some v in tree[area][rule].violations]
	count(hits) == 0
}

# NVCF-F-001
test_f001_admitted_types_pass if {
	count(workloads.nvcf_f_001.violations) == 0 with input as facts(good)
}

test_f001_grove_without_its_type_predicts_nvca_error if {
	some v in workloads.nvcf_f_001.violations with input as bent([testdata.grove_pcs], {"allowed_types": []})
	contains(v.message, `unsupported types: ["grove.io/v1alpha1.PodCliqueSet"]`)
	contains(v.message, "enable addons.groveOperator.enabled in environments/prod.yaml")
	v.path == ["kind"]
	v.doc == "workload:fn:0"
}

test_f001_lists_every_refused_object_in_order if {
	two := [testdata.grove_pcs, obj("grove.io/v1alpha1", "PodClique", {})]
	vs := workloads.nvcf_f_001.violations with input as bent(two, {"allowed_types": []})
	count(vs) == 2 # one per refused object, each quoting the workload's whole error
	every v in vs {
		contains(v.message, `unsupported types: ["grove.io/v1alpha1.PodCliqueSet" "grove.io/v1alpha1.PodClique"]`)
	}
}

test_f001_dynamo_v1beta1_is_refused if {
	beta := object.union(testdata.dynamo_graph, {"apiVersion": "nvidia.com/v1beta1", "gvk": "nvidia.com/v1beta1.DynamoGraphDeployment"})
	some v in workloads.nvcf_f_001.violations with input as facts([beta])
	contains(v.message, "NVCA passes only nvidia.com/v1alpha1 Dynamo kinds")
}

test_f001_standalone_names_the_merge_config if {
	some v in workloads.nvcf_f_001.violations with input as bent([testdata.pod_group], {"mode": "standalone", "allowed_types": []})
	contains(v.message, "allowedExtraKubernetesTypes in agentConfig.mergeConfig")
}

# NVCF-F-002
test_f002_annotations_on_the_owner_pass if {
	count(workloads.nvcf_f_002.violations) == 0 with input as facts([testdata.gang_statefulset])
}

test_f002_annotations_on_the_pod_template_fail if {
	moved := obj("apps/v1", "StatefulSet", {"spec": {"replicas": 2, "podManagementPolicy": "Parallel", "template": {"metadata": {"annotations": {"kai.scheduler/topology": "nvcf-mnnvl-topology"}}}}})
	some v in workloads.nvcf_f_002.violations with input as facts([moved])
	v.path == ["spec", "template", "metadata", "annotations", "kai.scheduler/topology"]
	contains(v.message, "move it to the StatefulSet's own metadata.annotations")
}

test_f002_cronjob_template_is_found if {
	job := obj("batch/v1", "CronJob", {"spec": {"jobTemplate": {"spec": {"template": {"metadata": {"annotations": {"kai.scheduler/topology-required-placement": "nvidia.com/gpu.clique"}}}}}}})
	count(workloads.nvcf_f_002.violations) == 1 with input as facts([job])
}

# NVCF-F-003
test_f003_add_ons_on_pass if {
	count(workloads.nvcf_f_003.violations) == 0 with input as facts(good)
}

test_f003_topology_without_topology_aware_scheduling_fails if {
	some v in workloads.nvcf_f_003.violations with input as bent([testdata.gang_statefulset], {"topology_aware": false})
	v.path == ["metadata", "annotations", "kai.scheduler/topology"]
}

test_f003_admitted_grove_kind_without_grove_fails if {
	some v in workloads.nvcf_f_003.violations with input as bent([testdata.grove_pcs], {"grove": false})
	contains(v.message, "enable addons.groveOperator.enabled")
}

# NVCF-F-004
test_f004_single_replica_deployment_passes if {
	one := obj("apps/v1", "Deployment", {"metadata": {"annotations": testdata.gang_annotations}, "spec": {"replicas": 1}})
	count(workloads.nvcf_f_004.violations) == 0 with input as facts([one])
}

test_f004_deployment_as_gang_fails if {
	four := obj("apps/v1", "Deployment", {"metadata": {"annotations": testdata.gang_annotations}, "spec": {"replicas": 4}})
	some v in workloads.nvcf_f_004.violations with input as facts([four])
	contains(v.message, "one PodGroup per Deployment pod")
}

# NVCF-F-005
test_f005_parallel_passes if {
	count(workloads.nvcf_f_005.violations) == 0 with input as facts([testdata.gang_statefulset])
}

test_f005_ordered_ready_fails if {
	ordered := sts({"spec": {"podManagementPolicy": "OrderedReady"}})
	some v in workloads.nvcf_f_005.violations with input as facts([ordered])
	v.path == ["spec", "podManagementPolicy"]
}

test_f005_default_policy_fails if {
	plain := obj("apps/v1", "StatefulSet", {"metadata": {"annotations": testdata.gang_annotations}, "spec": {"replicas": 3}})
	count(workloads.nvcf_f_005.violations) == 1 with input as facts([plain])
}

# NVCF-F-006
test_f006_known_topology_and_level_pass if {
	count(workloads.nvcf_f_006.violations) == 0 with input as facts([testdata.gang_statefulset, testdata.pod_group])
}

test_f006_unknown_topology_fails if {
	wrong := sts({"metadata": {"annotations": {"kai.scheduler/topology": "mnnvl"}}})
	some v in workloads.nvcf_f_006.violations with input as facts([wrong])
	contains(v.message, "Requested topology mnnvl does not exist")
}

test_f006_unknown_level_fails if {
	wrong := sts({"metadata": {"annotations": {"kai.scheduler/topology-required-placement": "rack"}}})
	some v in workloads.nvcf_f_006.violations with input as facts([wrong])
	v.path == ["metadata", "annotations", "kai.scheduler/topology-required-placement"]
}

test_f006_alias_needs_v0_17 if {
	aliased := object.union(testdata.workload_offer, {"topologies": [{"name": "nvcf-mnnvl-topology", "levels": [{"nodeLabel": "nvidia.com/gpu.clique", "alias": "clique"}]}]})
	wrong := sts({"metadata": {"annotations": {"kai.scheduler/topology-required-placement": "clique"}}})
	count(workloads.nvcf_f_006.violations) == 1 with input as bent([wrong], aliased)
	count(workloads.nvcf_f_006.violations) == 0 with input as bent([wrong], object.union(aliased, {"kai_features": {"topology_alias": true}}))
}

test_f006_placement_without_a_topology_fails if {
	bare := obj("apps/v1", "StatefulSet", {"metadata": {"annotations": {"kai.scheduler/topology-required-placement": "nvidia.com/gpu.clique"}}})
	some v in workloads.nvcf_f_006.violations with input as facts([bare])
	contains(v.message, "without a topology name")
}

test_f006_topology_declared_by_a_chart_counts if {
	own := object.union(testdata.kai_topology, {"name": "team-topology"})
	mine := sts({"metadata": {"annotations": {"kai.scheduler/topology": "team-topology"}}})
	count(workloads.nvcf_f_006.violations) == 0 with input as facts([own, mine])
}

test_f006_podgroup_constraint_is_checked if {
	pg := object.union(testdata.pod_group, {"spec": {"topologyConstraint": {"topology": "nvcf-mnnvl-topology", "requiredTopologyLevel": "zone"}}})
	some v in workloads.nvcf_f_006.violations with input as facts([pg])
	v.path == ["spec", "topologyConstraint", "requiredTopologyLevel"]
}

# NVCF-F-007
test_f007_good_podgroup_passes if {
	count(workloads.nvcf_f_007.violations) == 0 with input as facts([testdata.pod_group])
}

pg(spec) := object.union(testdata.pod_group, {"spec": spec})

test_f007_unknown_queue_fails if {
	some v in workloads.nvcf_f_007.violations with input as facts([pg({"queue": "team-a"})])
	contains(v.message, "QueueDoesNotExist")
	v.path == ["spec", "queue"]
}

test_f007_missing_queue_fails if {
	count(workloads.nvcf_f_007.violations) == 1 with input as facts([pg({"queue": ""})])
}

test_f007_both_minimums_fail if {
	some v in workloads.nvcf_f_007.violations with input as facts([pg({"minSubGroup": 1, "subGroups": [{"name": "a", "minMember": 1}]})])
	contains(v.message, "mutually exclusive")
}

test_f007_min_member_zero_fails if {
	some v in workloads.nvcf_f_007.violations with input as facts([pg({"minMember": 0})])
	contains(v.message, "at least 1")
}

test_f007_min_sub_group_needs_v0_15_3 if {
	grouped := object.union(testdata.pod_group, {"spec": {"minMember": null, "minSubGroup": 1, "subGroups": [{"name": "a", "minMember": 1}]}})
	count(workloads.nvcf_f_007.violations) == 0 with input as facts([grouped])
	count(workloads.nvcf_f_007.violations) == 1 with input as bent([grouped], {"kai_features": {"min_sub_group": false}})
}

test_f007_subgroup_tree_fails if {
	tree := pg({"subGroups": [{"name": "a", "minMember": 1, "parent": "root"}, {"name": "b", "minMember": 1}, {"name": "b", "minMember": 1}]})
	count(workloads.nvcf_f_007.violations) == 3 with input as facts([tree]) # a's parent, b twice
}

# NVCF-F-008
test_f008_narrower_child_passes if {
	count(workloads.nvcf_f_008.violations) == 0 with input as facts([testdata.grove_pcs])
}

test_f008_wider_child_fails if {
	wide := pcs_with({"topologyConstraint": {"pack": {"required": "hostname"}}, "cliques": [{"name": "w", "topologyConstraint": {"pack": {"required": "gpuclique"}}}]})
	some v in workloads.nvcf_f_008.violations with input as facts([wide])
	contains(v.message, "narrower than 'gpuclique'")
	v.path == ["spec", "template", "cliques", 0, "topologyConstraint", "pack", "required"]
}

test_f008_child_of_a_scaling_group_is_compared_with_the_group if {
	wide := pcs_with({
		"topologyConstraint": {"pack": {"required": "gpuclique"}},
		"podCliqueScalingGroups": [{"name": "g", "cliqueNames": ["w"], "topologyConstraint": {"pack": {"required": "hostname"}}}],
		"cliques": [{"name": "w", "topologyConstraint": {"pack": {"required": "gpuclique"}}}],
	})
	some v in workloads.nvcf_f_008.violations with input as facts([wide])
	contains(v.message, "scaling group g's 'hostname'")
}

test_f008_pack_domain_is_deprecated if {
	old := pcs_with({"topologyConstraint": {"topologyName": "nvcf-mnnvl-topology-binding", "packDomain": "gpuclique", "pack": null}, "cliques": []})
	some v in workloads.nvcf_f_008.violations with input as facts([old])
	contains(v.message, "packDomain is deprecated and cannot be used on new workloads")
}

test_f008_unknown_binding_and_domain_fail if {
	wrong := pcs_with({"topologyConstraint": {"topologyName": "nvcf-mnnvl-topology", "pack": {"required": "rack"}}, "cliques": []})
	count(workloads.nvcf_f_008.violations) == 1 with input as facts([wrong]) # the binding; its domains are unknown
	domain := pcs_with({"topologyConstraint": {"pack": {"required": "rack"}}, "cliques": []})
	some v in workloads.nvcf_f_008.violations with input as facts([domain])
	contains(v.message, "topology domain 'rack' does not exist in cluster topology [gpuclique, hostname]")
}

test_f008_topology_name_is_required if {
	nameless := object.union(testdata.grove_pcs, {"spec": {"template": {"topologyConstraint": {"topologyName": null}}}})
	some v in workloads.nvcf_f_008.violations with input as facts([nameless])
	contains(v.message, "topologyName is required")
}

test_f008_pack_needs_required_or_preferred if {
	empty := pcs_with({"topologyConstraint": {"pack": {"required": null}}, "cliques": []})
	some v in workloads.nvcf_f_008.violations with input as facts([empty])
	contains(v.message, "pack sets neither required nor preferred")
}

# NVCF-F-009
test_f009_min_available_within_replicas_passes if {
	count(workloads.nvcf_f_009.violations) == 0 with input as facts([testdata.grove_pcs])
}

test_f009_min_available_above_replicas_fails if {
	over := pcs_with({"cliques": [{"name": "w", "spec": {"replicas": 2, "minAvailable": 3}}]})
	some v in workloads.nvcf_f_009.violations with input as facts([over])
	contains(v.message, "minAvailable must not be greater than replicas")
}

scaling(g) := pcs_with({"cliques": [], "podCliqueScalingGroups": [g]})

test_f009_scaling_group_bounds if {
	count(workloads.nvcf_f_009.violations) == 1 with input as facts([scaling({"name": "g", "minAvailable": 0})])
	count(workloads.nvcf_f_009.violations) == 1 with input as facts([scaling({"name": "g", "replicas": 4, "minAvailable": 3, "scaleConfig": {"minReplicas": 2}})])
	count(workloads.nvcf_f_009.violations) == 0 with input as facts([scaling({"name": "g", "replicas": 4, "minAvailable": 2, "scaleConfig": {"minReplicas": 2}})])
}

# NVCF-F-010
test_f010_good_graph_passes if {
	count(workloads.nvcf_f_010.violations) == 0 with input as facts([testdata.dynamo_graph])
}

dgd(spec) := object.union(testdata.dynamo_graph, {"spec": spec})

test_f010_profile_must_be_a_binding if {
	some v in workloads.nvcf_f_010.violations with input as facts([dgd({"topologyConstraint": {"topologyProfile": "nvcf-mnnvl-topology"}})])
	contains(v.message, "is not a ClusterTopologyBinding")
}

test_f010_pack_domain_of_the_binding if {
	vs := workloads.nvcf_f_010.violations with input as facts([dgd({"services": {"VllmWorker": {"topologyConstraint": {"packDomain": "Rack_1"}}}})])
	count(vs) == 2 # not a domain name, and not the binding's
}

test_f010_service_constraint_needs_pack_domain if {
	some v in workloads.nvcf_f_010.violations with input as facts([dgd({"services": {"VllmWorker": {"topologyConstraint": {"packDomain": null}}}})])
	contains(v.message, "service VllmWorker")
}

test_f010_no_podgroup_next_to_a_graph if {
	some v in workloads.nvcf_f_010.violations with input as facts([testdata.dynamo_graph, testdata.pod_group])
	v.subject.kind == "PodGroup"
}

# NVCF-F-011
test_f011_good_topology_passes if {
	count(workloads.nvcf_f_011.violations) == 0 with input as facts([testdata.kai_topology])
}

topo(levels) := object.union(testdata.kai_topology, {"spec": {"levels": levels}})

test_f011_hostname_only_last if {
	some v in workloads.nvcf_f_011.violations with input as facts([topo([{"nodeLabel": "kubernetes.io/hostname"}, {"nodeLabel": "nvidia.com/gpu.clique"}])])
	v.path == ["spec", "levels", 0, "nodeLabel"]
}

test_f011_unique_labels_and_count if {
	count(workloads.nvcf_f_011.violations) == 1 with input as facts([topo([{"nodeLabel": "a"}, {"nodeLabel": "a"}])])
	count(workloads.nvcf_f_011.violations) == 1 with input as facts([topo([])])
	many := [{"nodeLabel": sprintf("l%d", [i])} | some i in numbers.range(1, 17)]
	count(workloads.nvcf_f_011.violations) == 1 with input as facts([topo(many)])
}

test_f011_aliases if {
	same := topo([{"nodeLabel": "a", "alias": "a"}])
	count(workloads.nvcf_f_011.violations) == 1 with input as facts([same]) # aliases need v0.17
	count(workloads.nvcf_f_011.violations) == 1 with input as bent([same], {"kai_features": {"topology_alias": true}})
	count(workloads.nvcf_f_011.violations) == 0 with input as bent([topo([{"nodeLabel": "a", "alias": "b"}])], {"kai_features": {"topology_alias": true}})
}

# NVCF-F-012
member(annotations) := sts({"spec": {"template": {"metadata": {"annotations": annotations}}}})

test_f012_skip_and_group_pass if {
	m := member({"pod-group-name": "x", "kai.scheduler/skip-podgrouper": "true"})
	count(workloads.nvcf_f_012.violations) == 0 with input as facts([m, testdata.pod_group])
}

test_f012_without_skip_fails if {
	some v in workloads.nvcf_f_012.violations with input as facts([member({"pod-group-name": "x"}), testdata.pod_group])
	v.path == ["spec", "template", "metadata", "annotations", "pod-group-name"]
}

test_f012_group_must_exist if {
	m := member({"pod-group-name": "elsewhere", "kai.scheduler/skip-podgrouper": "true"})
	some v in workloads.nvcf_f_012.violations with input as facts([m, testdata.pod_group])
	contains(v.message, "which the chart does not create")
}

test_f012_skip_needs_v0_15 if {
	m := member({"pod-group-name": "x", "kai.scheduler/skip-podgrouper": "true"})
	count(workloads.nvcf_f_012.violations) == 1 with input as bent([m, testdata.pod_group], {"kai_features": {"skip_podgrouper": false}})
}
