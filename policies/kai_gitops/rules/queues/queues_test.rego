package kai_gitops.tests.queues

import data.kai_gitops.rules.queues
import data.kai_gitops.testdata

sa := testdata.standalone_static

quota_zero := {"cpu": {"quota": 0, "limit": -1, "overQuotaWeight": 1}, "gpu": testdata.unlimited, "memory": testdata.unlimited}

# KAI-Q-001
test_q001_unlimited_passes if {
	count(queues.kai_q_001.violations) == 0 with input as sa
}

test_q001_chart_default_quota_fails if {
	effective := object.union(testdata.canonical_values, {"defaultQueue": {"childResources": quota_zero}})
	facts := data.kai_gitops.testdata.with_kai_values(sa, {"defaultQueue": {}}, effective)
	vs := [x | some x in queues.kai_q_001.violations with input as facts]
	count(vs) == 1
	v := vs[0]
	v.path == ["defaultQueue", "childResources", "cpu"]
	contains(v.message, "quota=0, limit=-1, overQuotaWeight=1 (not set: chart v0.16.7 defaults (as in v0.16.8, the nearest chart kai-gitops models))")
	contains(v.message, "\"CPU resource violation for queue default-queue\"")
}

test_q001_missing_names_fall_back_to_chart_defaults if {
	dq := object.remove(testdata.canonical_values.defaultQueue, ["parentName", "childName"])
	effective := object.union(
		object.remove(testdata.canonical_values, ["defaultQueue"]),
		{"defaultQueue": object.union(dq, {"parentResources": quota_zero, "childResources": quota_zero})},
	)
	facts := data.kai_gitops.testdata.with_kai_values(sa, {}, effective)
	msgs := [v.message | some v in queues.kai_q_001.violations with input as facts]
	count(msgs) == 2
	some m1 in msgs
	contains(m1, "\"CPU resource violation for queue default-parent-queue\"")
	some m2 in msgs
	contains(m2, "\"CPU resource violation for queue default-queue\"")
	not contains(concat(" ", msgs), "queue ?")
}

test_q001_values_queue_names_are_used if {
	effective := object.union(testdata.canonical_values, {"defaultQueue": {"parentName": "root", "childResources": quota_zero}})
	facts := data.kai_gitops.testdata.with_kai_values(sa, {}, effective)
	some v in queues.kai_q_001.violations with input as facts
	contains(v.message, "\"CPU resource violation for queue default-queue\"")
}

test_q001_partial_and_malformed_values_count_as_zero if {
	# object.union merges objects recursively, so the defaultQueue section is replaced, not merged.
	dq := object.union(
		object.remove(testdata.canonical_values.defaultQueue, ["parentResources", "childResources"]),
		{
			"parentResources": {"cpu": "unlimited", "gpu": {"quota": -1, "limit": -1}, "memory": testdata.unlimited},
			"childResources": null,
		},
	)
	effective := {"scheduler": testdata.canonical_values.scheduler, "defaultQueue": dq}
	facts := data.kai_gitops.testdata.with_kai_values(sa, {}, effective)
	paths := {concat(".", v.path) | some v in queues.kai_q_001.violations with input as facts}
	paths == {
		"defaultQueue.parentResources.cpu", "defaultQueue.parentResources.gpu",
		"defaultQueue.childResources.cpu", "defaultQueue.childResources.gpu", "defaultQueue.childResources.memory",
	}
}

# KAI-Q-002
test_q002_canonical_names_pass if {
	count(queues.kai_q_002.violations) == 0 with input as sa
}

test_q002_renamed_child_fails if {
	effective := object.union(testdata.canonical_values, {"defaultQueue": {"childName": "nvcf", "createDefaultQueue": false}})
	facts := object.union(sa, {"desired": {"kai_values_effective": effective}})
	msgs := {v.message | some v in queues.kai_q_002.violations with input as facts}
	msgs == {
		"defaultQueue.childName is \"nvcf\"; NVCA requires \"default-queue\". Set defaultQueue.childName: \"default-queue\"",
		"defaultQueue.createDefaultQueue is false; NVCA requires true. Set defaultQueue.createDefaultQueue: true",
	}
}

live_queues(qs) := data.kai_gitops.testdata.with_live({"queues": qs})

parent := {"name": "default-parent-queue", "parent": null, "has_resources": true, "resources": testdata.unlimited_resources}

child(p) := {"name": "default-queue", "parent": p, "has_resources": true, "resources": testdata.unlimited_resources}

# KAI-Q-010
test_q010_canonical_parent_passes if {
	count(queues.kai_q_010.violations) == 0 with input as testdata.live_ok
}

test_q010_other_parent_fails_though_nvca_accepts_it if {
	facts := live_queues([parent, child("team-root")])
	some v in queues.kai_q_010.violations with input as facts
	contains(v.message, "stricter than NVCA")
	v.subject.name == "default-queue"
}

test_q010_static_scope_is_silent if {
	count(queues.kai_q_010.violations) == 0 with input as object.union(testdata.addon_static, {"live": live_queues([child("x")]).live})
}

# KAI-Q-011
zero := {"quota": 0, "limit": 0, "overQuotaWeight": 0}

# As Python reports a queue whose spec sets only gpu: the absent numbers are 0.
limited_team := {"name": "team-a", "parent": "dept", "has_resources": true, "resources": {
	"cpu": zero, "gpu": {"quota": 4, "limit": 4, "overQuotaWeight": 1}, "memory": zero,
}}

dept := {"name": "dept", "parent": null, "has_resources": true, "resources": quota_zero}

test_q011_unlimited_used_queue_passes if {
	count(queues.kai_q_011.violations) == 0 with input as testdata.live_ok
}

test_q011_limited_used_queue_and_its_parent_fail if {
	facts := data.kai_gitops.testdata.with_live({
		"queues": [parent, child("default-parent-queue"), limited_team, dept],
		"nvcf_pods": object.union(testdata.live_part.nvcf_pods, {"queues_used": ["default-queue", "team-a"]}),
	})
	subjects := {v.subject.name: v.message | some v in queues.kai_q_011.violations with input as facts}
	object.keys(subjects) == {"team-a", "dept"}
	contains(subjects["team-a"], "cpu quota=0, limit=0, overQuotaWeight=0; gpu quota=4, limit=4, overQuotaWeight=1; memory quota=0, limit=0, overQuotaWeight=0")
	contains(subjects.dept, "is the parent of a queue used by NVCF pods")
}

test_q011_unused_limited_queue_passes if {
	facts := data.kai_gitops.testdata.with_live({"queues": [parent, child("default-parent-queue"), limited_team, dept]})
	count(queues.kai_q_011.violations) == 0 with input as facts
}

# KAI-Q-012
test_q012_queue_with_resources_passes if {
	count(queues.kai_q_012.violations) == 0 with input as testdata.live_ok
}

test_q012_queue_without_resources_fails if {
	facts := live_queues([parent, {"name": "default-queue", "parent": "default-parent-queue", "has_resources": false, "resources": {"cpu": zero, "gpu": zero, "memory": zero}}])
	some v in queues.kai_q_012.violations with input as facts
	startswith(v.message, "Queue default-queue has no spec.resources block")
}

# KAI-Q-013
test_q013_existing_queue_passes if {
	count(queues.kai_q_013.violations) == 0 with input as testdata.live_ok
}

test_q013_missing_queue_fails if {
	facts := data.kai_gitops.testdata.with_live({"nvcf_pods": object.union(testdata.live_part.nvcf_pods, {"queues_used": ["ghost"]})})
	some v in queues.kai_q_013.violations with input as facts
	v.message == "NVCF pods are labelled kai.scheduler/queue=ghost but no Queue ghost exists; KAI will not schedule them"
}

# The one definition of unlimited and capped (data.kai_gitops.lib.queues), as every rule reads it.
test_queue_verdicts if {
	floats := {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
	qs := [
		{"name": "free", "resources": {"cpu": floats, "gpu": testdata.unlimited, "memory": testdata.unlimited}},
		{"name": "share", "resources": {"cpu": testdata.unlimited, "gpu": {"quota": 8, "limit": -1, "overQuotaWeight": 1}, "memory": testdata.unlimited}},
		{"name": "cap", "resources": {"cpu": zero, "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 1}, "memory": testdata.unlimited}},
	]
	data.kai_gitops.lib.queues.queue_limited_kinds(qs) == {"share": ["gpu"], "cap": ["cpu", "gpu"]}
	data.kai_gitops.lib.queues.queue_capped_kinds(qs) == {"cap": ["cpu", "gpu"]}
}
