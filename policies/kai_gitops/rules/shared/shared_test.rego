package kai_gitops.tests.shared

import data.kai_gitops.rules.shared
import data.kai_gitops.testdata

limited := {"cpu": testdata.unlimited, "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 1}, "memory": testdata.unlimited}

research := {"name": "research", "parent": null, "doc": "queues:0", "resources": limited}

# NVCA-S-001
test_s001_dedicated_without_limited_queues_passes if {
	count(shared.nvca_s_001.violations) == 0 with input as testdata.addon_static
}

test_s001_dedicated_with_limited_queue_warns if {
	facts := object.union(testdata.addon_static, {"desired": {"extra_queues": [research]}})
	some v in shared.nvca_s_001.violations with input as facts
	v.doc == "queues:0"
	v.path == ["spec", "resources"]
	contains(v.message, "queue research in Git caps gpu (limit is not -1)")
}

test_s001_undeclared_intent_with_limited_queue_warns if {
	undeclared := {"desired": {"shared_cluster": {"intent": "undeclared", "nodes": [], "selector": null}, "extra_queues": [research]}}
	some v in shared.nvca_s_001.violations with input as object.union(testdata.addon_static, undeclared)
	contains(v.message, "but the shared-cluster intent is \"undeclared\"")
}

test_s001_shared_intent_passes if {
	facts := object.union(testdata.addon_static, object.union(data.kai_gitops.testdata.shared_intent(["n1"]), {"desired": {"extra_queues": [research]}}))
	count(shared.nvca_s_001.violations) == 0 with input as facts
}

# NVCA-S-002
test_s002_shared_with_nodes_passes if {
	count(shared.nvca_s_002.violations) == 0 with input as object.union(testdata.addon_static, data.kai_gitops.testdata.shared_intent(["n1"]))
}

test_s002_shared_with_selector_passes if {
	facts := object.union(testdata.addon_static, {"desired": {"shared_cluster": {"intent": "shared", "nodes": [], "selector": {"pool": "nvcf"}}}})
	count(shared.nvca_s_002.violations) == 0 with input as facts
}

test_s002_shared_without_nodes_fails if {
	count(shared.nvca_s_002.violations) == 1 with input as object.union(testdata.addon_static, data.kai_gitops.testdata.shared_intent([]))
}

nodes(label_entries, true_names) := {"nodes": {
	"total": 10, "schedule_label": label_entries, "schedule_label_count": count(label_entries),
	"schedule_true": true_names,
}}

shared_live(intended, changes) := object.union(
	object.union(testdata.live_ok, data.kai_gitops.testdata.shared_intent(intended)),
	{"live": changes},
)

# NVCA-S-010
test_s010_dedicated_unlabelled_passes if {
	count(shared.nvca_s_010.violations) == 0 with input as testdata.live_ok
}

test_s010_dedicated_with_true_label_fails if {
	facts := data.kai_gitops.testdata.with_live(nodes([{"name": "n1", "value": "true"}], ["n1"]))
	some v in shared.nvca_s_010.violations with input as facts
	contains(v.message, "1 node(s) are labelled nvca.nvcf.nvidia.io/schedule=true (n1)")
}

test_s010_capital_true_does_not_turn_shared_mode_on if {
	facts := data.kai_gitops.testdata.with_live(nodes([{"name": "n1", "value": "True"}], []))
	count(shared.nvca_s_010.violations) == 0 with input as facts
}

# NVCA-S-011
test_s011_intended_nodes_labelled_passes if {
	facts := shared_live(["n1", "n2"], nodes([{"name": "n1", "value": "true"}, {"name": "n2", "value": "true"}], ["n1", "n2"]))
	count(shared.nvca_s_011.violations) == 0 with input as facts
}

test_s011_unlabelled_intended_node_fails if {
	facts := shared_live(["n1", "n2"], nodes([{"name": "n1", "value": "true"}, {"name": "n2", "value": "yes"}], ["n1"]))
	some v in shared.nvca_s_011.violations with input as facts
	v.fix == "kubectl label nodes n2 nvca.nvcf.nvidia.io/schedule=true --overwrite"
}

test_s011_selector_intent_with_no_label_fails if {
	facts := object.union(testdata.live_ok, {"desired": {"shared_cluster": {"intent": "shared", "nodes": [], "selector": {"pool": "nvcf"}}}})
	some v in shared.nvca_s_011.violations with input as facts
	v.fix == "kubectl label nodes -l pool=nvcf nvca.nvcf.nvidia.io/schedule=true --overwrite"
}

# NVCA-S-012
test_s012_exact_true_passes if {
	facts := shared_live(["n1"], nodes([{"name": "n1", "value": "true"}], ["n1"]))
	count(shared.nvca_s_012.violations) == 0 with input as facts
}

test_s012_capitalised_value_warns if {
	facts := shared_live(["n1"], nodes([{"name": "n1", "value": "True"}, {"name": "n9", "value": "yes"}], []))
	fixes := {v.subject.name: v.fix | some v in shared.nvca_s_012.violations with input as facts}
	fixes == {
		"n1": "kubectl label node n1 nvca.nvcf.nvidia.io/schedule=true --overwrite",
		"n9": "kubectl label node n9 nvca.nvcf.nvidia.io/schedule-",
	}
}

# NVCA-S-013
test_s013_only_intended_nodes_pass if {
	facts := shared_live(["n1"], nodes([{"name": "n1", "value": "true"}], ["n1"]))
	count(shared.nvca_s_013.violations) == 0 with input as facts
}

test_s013_extra_labelled_node_warns if {
	facts := shared_live(["n1"], nodes([{"name": "n1", "value": "true"}, {"name": "n7", "value": "true"}], ["n1", "n7"]))
	some v in shared.nvca_s_013.violations with input as facts
	v.fix == "kubectl label nodes n7 nvca.nvcf.nvidia.io/schedule-"
}

test_s013_selector_matches_from_python_count_as_intended if {
	base := object.union(testdata.live_ok, {"desired": {"shared_cluster": {"intent": "shared", "nodes": [], "selector": {"pool": "nvcf"}}}})
	facts := object.union(base, {"live": {"nodes": {"schedule_label": [], "schedule_true": ["n1", "n2"], "selector_matches": ["n1"]}}})
	some v in shared.nvca_s_013.violations with input as facts
	contains(v.message, ": n2;")
}

# NVCA-S-014
queues_with_limited := array.concat(testdata.live_part.queues, [{"name": "research", "parent": null, "has_resources": true, "resources": limited}])

test_s014_unlimited_queues_pass if {
	count(shared.nvca_s_014.violations) == 0 with input as testdata.live_ok
}

test_s014_limited_queue_without_shared_mode_warns if {
	facts := data.kai_gitops.testdata.with_live({"queues": queues_with_limited})
	some v in shared.nvca_s_014.violations with input as facts
	contains(v.message, "1 live queue(s) cap usage with a limit (research)")
}

test_s014_limited_queue_with_shared_mode_passes if {
	facts := shared_live(["n1"], object.union({"queues": queues_with_limited}, nodes([{"name": "n1", "value": "true"}], ["n1"])))
	count(shared.nvca_s_014.violations) == 0 with input as facts
}

test_s014_finite_quota_alone_is_not_a_cap if {
	quota_only := {"cpu": {"quota": 0, "limit": -1, "overQuotaWeight": 1}, "gpu": testdata.unlimited, "memory": testdata.unlimited}
	queues := [{"name": "q", "parent": null, "has_resources": true, "resources": quota_only}]
	count(shared.nvca_s_014.violations) == 0 with input as data.kai_gitops.testdata.with_live({"queues": queues})
}

test_s010_s011_s013_need_git if {
	facts := object.remove(data.kai_gitops.testdata.with_live({"nodes": {"schedule_label": [], "schedule_true": ["n1"]}}), ["desired"])
	count(shared.nvca_s_010.violations) == 0 with input as facts
	count(shared.nvca_s_011.violations) == 0 with input as facts
	count(shared.nvca_s_013.violations) == 0 with input as facts
}

test_s012_without_git_gives_no_fix if {
	facts := object.remove(data.kai_gitops.testdata.with_live({"nodes": {"schedule_label": [{"name": "n1", "value": "yes"}], "schedule_true": []}}), ["desired"])
	some v in shared.nvca_s_012.violations with input as facts
	v.fix == null
	contains(v.message, "set it to true if the node is meant for NVCF, otherwise remove the label")
}
