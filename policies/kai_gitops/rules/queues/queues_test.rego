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
	contains(v.message, "quota=0, limit=-1, overQuotaWeight=1 (not set: chart v0.16.7 defaults (as in v0.16.9, the nearest chart kai-gitops models))")
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

# --- KAI-Q-020..023: the hierarchy once Git is applied ------------------------------------------------

# A Git queue as desired.queues carries it: numbers and where each is set.
git_q(name, p, res) := {
	"name": name, "parent": p, "has_resources": true, "resources": res, "doc": sprintf("queues:%s", [name]),
	"origin": "queue-file",
	"paths": object.union(
		{k: ["spec", "resources", r, f] | some r in ["cpu", "gpu", "memory"]; some f in ["quota", "limit", "overQuotaWeight"]; k := sprintf("%s.%s", [r, f])},
		{"parent": ["spec", "parentQueue"]},
	),
}

gpu(quota, limit) := {"cpu": testdata.unlimited, "gpu": {"quota": quota, "limit": limit, "overQuotaWeight": 1}, "memory": testdata.unlimited}

# A live queue with what its running work holds (in the spec's units), or no status (allocated null).
live_q(name, p, res, allocated) := {
	"name": name, "parent": p, "has_resources": true, "resources": res,
	"allocated": allocated, "allocated_non_preemptible": np_of(allocated),
}

np_of(allocated) := {"cpu": 0, "gpu": 0, "memory": 0} if is_object(allocated)

np_of(allocated) := null if not is_object(allocated)

held(g) := {"cpu": 0, "gpu": g, "memory": 0}

mem(quota) := {"cpu": testdata.unlimited, "gpu": testdata.unlimited, "memory": {"quota": quota, "limit": -1, "overQuotaWeight": 1}}

static_git(qs) := object.union(sa, {"desired": {"queues": qs}})

live_git(git, live) := object.union(data.kai_gitops.testdata.with_live({"queues": array.concat([parent, child("default-parent-queue")], live)}), {"desired": {"queues": git}})

q020(facts) := [v | some v in queues.kai_q_020.violations with input as facts]

# KAI-Q-020
test_q020_cut_below_allocation_fails_with_numbers if {
	vs := q020(live_git([git_q("team-a", "default-parent-queue", gpu(2, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), held(6))]))
	count(vs) == 1
	vs[0].message == "Queue team-a: Git sets gpu quota 2 GPU (live 8), below the 6 GPU its running work holds now (status.allocated): 4 GPU of running work becomes over-quota (reclaimed first)"
	vs[0].doc == "queues:team-a"
	vs[0].path == ["spec", "resources", "gpu", "quota"]
}

test_q020_cut_that_still_fits_passes if {
	count(q020(live_git([git_q("team-a", "default-parent-queue", gpu(6, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), held(6))]))) == 0
}

test_q020_limit_below_allocation_fails if {
	vs := q020(live_git([git_q("team-a", "default-parent-queue", gpu(2, 4))], [live_q("team-a", "default-parent-queue", gpu(2, 8), held(6))]))
	[v.message | some v in vs] == ["Queue team-a: Git sets gpu limit 4 GPU (live 8), below the 6 GPU its running work holds now (status.allocated): 2 GPU of running work is over the limit (preempted)"]
}

test_q020_unlimited_is_never_below if {
	count(q020(live_git([git_q("team-a", "default-parent-queue", gpu(-1, -1))], [live_q("team-a", "default-parent-queue", gpu(8, 8), held(6))]))) == 0
}

test_q020_from_unlimited_says_so if {
	some v in q020(live_git([git_q("team-a", "default-parent-queue", gpu(2, -1))], [live_q("team-a", "default-parent-queue", gpu(-1, -1), held(6))]))
	contains(v.message, "(live -1 (unlimited))")
}

test_q020_zero_quota_with_nothing_held_passes if {
	count(q020(live_git([git_q("team-a", "default-parent-queue", gpu(0, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), held(0))]))) == 0
}

test_q020_zero_quota_under_a_fraction_fails if {
	some v in q020(live_git([git_q("team-a", "default-parent-queue", gpu(0, -1))], [live_q("team-a", "default-parent-queue", gpu(1, -1), held(0.5))]))
	contains(v.message, "below the 0.5 GPU its running work holds now (status.allocated): 0.5 GPU of running work becomes over-quota")
}

test_q020_fractions_without_float_noise if {
	some v in q020(live_git([git_q("team-a", "default-parent-queue", gpu(0.5, -1))], [live_q("team-a", "default-parent-queue", gpu(1, -1), held(0.7))]))
	contains(v.message, ": 0.2 GPU of running work")
}

test_q020_unchanged_quota_is_not_a_change if {
	# Work above an unchanged quota is KAI's over-quota borrowing, not something this change does.
	count(q020(live_git([git_q("team-a", "default-parent-queue", gpu(2, -1))], [live_q("team-a", "default-parent-queue", gpu(2, -1), held(6))]))) == 0
}

test_q020_missing_status_cannot_judge if {
	count(q020(live_git([git_q("team-a", "default-parent-queue", gpu(0, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), null)]))) == 0
}

test_q020_memory_in_mb_and_non_preemptible if {
	q := object.union(live_q("team-a", "default-parent-queue", mem(8000), {"cpu": 0, "gpu": 0, "memory": 4294.9673}), {"allocated_non_preemptible": {"cpu": 0, "gpu": 0, "memory": 2147.4836}})
	some v in q020(live_git([git_q("team-a", "default-parent-queue", mem(2000))], [q]))
	v.message == "Queue team-a: Git sets memory quota 2000 MB (live 8000), below the 4294.9673 MB its running work holds now (status.allocated): 2294.9673 MB of running work becomes over-quota (reclaimed first); 2147.4836 MB of it is non-preemptible"
}

test_q020_static_scope_is_silent if {
	facts := object.union(static_git([git_q("team-a", "default-parent-queue", gpu(0, -1))]), {"live": {"queues": [live_q("team-a", "default-parent-queue", gpu(8, -1), held(6))]}})
	count(q020(facts)) == 0
}

# KAI-Q-021
research(quota) := git_q("research", "default-parent-queue", gpu(quota, -1))

test_q021_children_over_parent_fails_with_numbers if {
	facts := static_git([research(8), git_q("vision", "research", gpu(6, -1)), git_q("nlp", "research", gpu(6, -1))])
	vs := [v | some v in queues.kai_q_021.violations with input as facts]
	count(vs) == 1
	vs[0].message == "Queue research: its children's gpu quotas add up to 12 GPU (nlp 6, vision 6), more than its own gpu quota 8 GPU by 4 GPU; KAI cannot guarantee every child its quota"
	vs[0].subject.name == "research"
	vs[0].path == ["spec", "resources", "gpu", "quota"]
}

test_q021_children_within_parent_pass if {
	facts := static_git([research(8), git_q("vision", "research", gpu(4, -1)), git_q("nlp", "research", gpu(3.5, -1)), git_q("ops", "research", gpu(0.5, -1))])
	count(queues.kai_q_021.violations) == 0 with input as facts
}

test_q021_unlimited_parent_and_zero_children_pass if {
	facts := static_git([research(-1), git_q("vision", "research", gpu(6, -1)), git_q("nlp", "research", gpu(0, -1))])
	count(queues.kai_q_021.violations) == 0 with input as facts
}

test_q021_fractions_add_up if {
	facts := static_git([research(1), git_q("vision", "research", gpu(0.5, -1)), git_q("nlp", "research", gpu(0.75, -1))])
	some v in queues.kai_q_021.violations with input as facts
	contains(v.message, "add up to 1.25 GPU (nlp 0.75, vision 0.5), more than its own gpu quota 1 GPU by 0.25 GPU")
}

test_q021_live_child_counts_in_a_live_run if {
	facts := live_git([research(8), git_q("vision", "research", gpu(6, -1))], [live_q("nlp", "research", gpu(4, -1), null)])
	some v in queues.kai_q_021.violations with input as facts
	contains(v.message, "(nlp 4, vision 6)")
}

# KAI-Q-022
test_q022_child_quota_above_parent_fails if {
	facts := static_git([research(8), git_q("vision", "research", gpu(12, -1))])
	msgs := {v.message | some v in queues.kai_q_022.violations with input as facts}
	msgs == {"Queue vision: gpu quota 12 GPU is above its parent research's gpu quota 8 GPU; KAI gives the subtree no more than the parent's, so set it to at most 8"}
}

test_q022_unlimited_child_under_a_limited_parent_fails if {
	facts := static_git([git_q("research", "default-parent-queue", gpu(8, 16)), git_q("vision", "research", gpu(4, -1))])
	msgs := {v.message | some v in queues.kai_q_022.violations with input as facts}
	msgs == {"Queue vision: gpu limit -1 (unlimited) is above its parent research's gpu limit 16 GPU; KAI gives the subtree no more than the parent's, so set it to at most 16"}
}

test_q022_equal_zero_and_under_unlimited_pass if {
	facts := static_git([research(8), git_q("vision", "research", gpu(8, -1)), git_q("nlp", "research", gpu(0, -1))])
	count(queues.kai_q_022.violations) == 0 with input as facts
	count(queues.kai_q_022.violations) == 0 with input as static_git([research(-1), git_q("vision", "research", gpu(-1, -1))])
}

test_q022_live_parent_caps_a_git_child if {
	facts := live_git([git_q("vision", "research", gpu(0.5, -1))], [live_q("research", "default-parent-queue", gpu(0.25, -1), null)])
	some v in queues.kai_q_022.violations with input as facts
	v.message == "Queue vision: gpu quota 0.5 GPU is above its parent research's gpu quota 0.25 GPU; KAI gives the subtree no more than the parent's, so set it to at most 0.25"
}

test_q022_memory_compared_in_mb if {
	facts := static_git([git_q("research", "default-parent-queue", mem(512000)), git_q("vision", "research", mem(1024000))])
	some v in queues.kai_q_022.violations with input as facts
	contains(v.message, "memory quota 1024000 MB is above its parent research's memory quota 512000 MB")
}

# KAI-Q-023
test_q023_unknown_parent_fails_in_a_live_run if {
	vs := [v | some v in queues.kai_q_023.violations with input as live_git([git_q("vision", "reserch", gpu(1, -1))], [])]
	[v.message | some v in vs] == ["Queue vision has parentQueue reserch, which exists neither in Git nor in the cluster; KAI will not schedule its pods"]
	vs[0].path == ["spec", "parentQueue"]
}

test_q023_parent_only_live_passes if {
	count(queues.kai_q_023.violations) == 0 with input as live_git([git_q("vision", "research", gpu(1, -1))], [live_q("research", "default-parent-queue", gpu(8, -1), null)])
}

test_q023_unknown_parent_is_not_judged_without_the_cluster if {
	count(queues.kai_q_023.violations) == 0 with input as static_git([git_q("vision", "reserch", gpu(1, -1))])
}

# KAI-Q-024
test_q024_a_parent_git_does_not_declare_is_said_without_the_cluster if {
	vs := [v | some v in queues.kai_q_024.violations with input as static_git([git_q("vision", "reserch", gpu(1, -1))])]
	[v.message | some v in vs] == ["Queue vision has parentQueue reserch, which Git does not declare; not verified without --live-snapshot (if it is a typo, KAI will not schedule the queue's pods)"]
	vs[0].path == ["spec", "parentQueue"]
}

test_q024_a_parent_git_declares_is_no_finding if {
	count(queues.kai_q_024.violations) == 0 with input as static_git([git_q("research", null, gpu(8, -1)), git_q("vision", "research", gpu(1, -1))])
}

test_q024_is_silent_where_the_cluster_is_known if {
	count(queues.kai_q_024.violations) == 0 with input as live_git([git_q("vision", "reserch", gpu(1, -1))], [])
	count(queues.kai_q_024.violations) == 0 with input as snapshot_git([git_q("vision", "reserch", gpu(1, -1))], [], null)
}

# check --live-snapshot: a static evaluation given the snapshot's queues (input.live_queues)
snapshot_git(git, live, taken) := object.union(static_git(git), {"live_queues": {"source": "snapshot lab.json", "taken_at": taken, "queues": array.concat([parent, child("default-parent-queue")], live)}})

test_q023_unknown_parent_fails_with_a_snapshot if {
	vs := [v | some v in queues.kai_q_023.violations with input as snapshot_git([git_q("vision", "reserch", gpu(1, -1))], [], "2026-12-01 20:00 UTC")]
	[v.message | some v in vs] == ["Queue vision has parentQueue reserch, which exists neither in Git nor in the cluster (cluster's queues as of 2026-12-01 20:00 UTC, snapshot lab.json); KAI will not schedule its pods"]
}

test_q023_parent_only_in_the_snapshot_passes if {
	count(queues.kai_q_023.violations) == 0 with input as snapshot_git([git_q("vision", "research", gpu(1, -1))], [live_q("research", "default-parent-queue", gpu(8, -1), null)], null)
}

test_q020_in_the_pr_check_names_the_snapshots_time if {
	vs := q020(snapshot_git([git_q("team-a", "default-parent-queue", gpu(2, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), held(6))], "2026-12-01 20:00 UTC"))
	[v.message | some v in vs] == ["Queue team-a: Git sets gpu quota 2 GPU (live 8), below the 6 GPU its running work holds now (status.allocated): 4 GPU of running work becomes over-quota (reclaimed first); allocated as of 2026-12-01 20:00 UTC (snapshot lab.json)"]
}

test_q020_a_snapshot_without_time_says_so if {
	some v in q020(snapshot_git([git_q("team-a", "default-parent-queue", gpu(2, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), held(6))], null))
	endswith(v.message, "; allocated per snapshot lab.json (it does not say when it was taken)")
}

test_q020_with_base_compares_with_the_base if {
	facts := snapshot_git([git_q("team-a", "default-parent-queue", gpu(2, -1))], [live_q("team-a", "default-parent-queue", gpu(8, -1), held(6))], null)
	unchanged := object.union(facts, {"desired": {"base_queues": [git_q("team-a", "default-parent-queue", gpu(2, -1))]}})
	count(q020(unchanged)) == 0
	cut := object.union(facts, {"desired": {"base_queues": [git_q("team-a", "default-parent-queue", gpu(4, -1))]}})
	some v in q020(cut)
	startswith(v.message, "Queue team-a: Git sets gpu quota 2 GPU (base 4), below the 6 GPU")
}

test_q020_static_without_a_snapshot_is_silent if {
	count(q020(static_git([git_q("team-a", "default-parent-queue", gpu(2, -1))]))) == 0
}

test_q023_cycle_of_two if {
	facts := static_git([git_q("a", "b", gpu(1, -1)), git_q("b", "a", gpu(1, -1))])
	msgs := [v.message | some v in queues.kai_q_023.violations with input as facts]
	msgs == ["Queues a, b form a parentQueue cycle (a → b, b → a); KAI schedules none of their pods. Give one of them a parent outside the cycle"]
}

test_q023_cycle_of_three_with_a_queue_below_it if {
	facts := static_git([git_q("a", "c", gpu(1, -1)), git_q("b", "a", gpu(1, -1)), git_q("c", "b", gpu(1, -1)), git_q("d", "a", gpu(1, -1))])
	vs := [v | some v in queues.kai_q_023.violations with input as facts]
	[v.message | some v in vs] == ["Queues a, b, c form a parentQueue cycle (a → c, b → a, c → b); KAI schedules none of their pods. Give one of them a parent outside the cycle"]
	vs[0].subject.name == "a"
}

test_q023_self_parent_is_a_cycle if {
	some v in queues.kai_q_023.violations with input as static_git([git_q("a", "a", gpu(1, -1))])
	startswith(v.message, "Queues a form a parentQueue cycle (a → a)")
}

test_q023_tree_passes if {
	count(queues.kai_q_023.violations) == 0 with input as static_git([research(8), git_q("vision", "research", gpu(1, -1))])
}
