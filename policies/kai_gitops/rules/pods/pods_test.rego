package kai_gitops.tests.pods

import data.kai_gitops.rules.pods
import data.kai_gitops.testdata

with_pods(changes) := data.kai_gitops.testdata.with_live({"nvcf_pods": object.union(testdata.live_part.nvcf_pods, changes)})

old_pod := {"namespace": "fn-ns", "name": "fn-0", "scheduler": "default-scheduler", "age_s": 93784}

# NVCA-P-001
test_p001_all_on_kai_passes if {
	count(pods.nvca_p_001.violations) == 0 with input as testdata.live_ok
}

test_p001_pod_on_default_scheduler_is_info_with_age if {
	some v in pods.nvca_p_001.violations with input as with_pods({"not_on_kai": [old_pod]})
	v.message == "NVCF pod fn-ns/fn-0 uses scheduler \"default-scheduler\" and is 1d2h old: it was created before KAIScheduler was enabled; redeploy its function to move it to kai-scheduler"
	v.fix == null
}

test_p001_silent_when_gate_is_off if {
	facts := object.union(with_pods({"not_on_kai": [old_pod]}), {
		"desired": {"gates": {"enabled": []}},
		"live": {"gate_hops": {"status": []}},
	})
	count(pods.nvca_p_001.violations) == 0 with input as facts
}

# NVCA-P-002
test_p002_labelled_pods_pass if {
	count(pods.nvca_p_002.violations) == 0 with input as testdata.live_ok
}

test_p002_missing_label_warns if {
	some v in pods.nvca_p_002.violations with input as with_pods({"missing_queue_label": [{"namespace": "fn-ns", "name": "fn-1"}]})
	v.subject.name == "fn-1"
}

# NVCA-P-003
pending(scheduler, reason, message) := {"namespace": "fn-ns", "name": "fn-2", "scheduler": scheduler, "reason": reason, "message": message}

explain(facts) := [v.message | some v in pods.nvca_p_003.violations with input as facts]

test_p003_no_pending_passes if {
	count(pods.nvca_p_003.violations) == 0 with input as testdata.live_ok
}

test_p003_unschedulable_quotes_event if {
	msgs := explain(with_pods({"pending": [pending("kai-scheduler", "Unschedulable", "0/3 nodes are available")]}))
	msgs == ["NVCF pod fn-ns/fn-2 is Pending: KAI cannot place it: \"0/3 nodes are available\""]
}

test_p003_kai_down_explained if {
	facts := object.union(
		with_pods({"pending": [pending("kai-scheduler", "", "")]}),
		{"live": {"kai_pods": [{"name": "kai-scheduler-default-0", "ready": false, "phase": "CrashLoopBackOff"}]}},
	)
	some msg in explain(facts)
	contains(msg, "KAI pods in kai-scheduler are not Ready")
}

test_p003_other_scheduler_explained if {
	some msg in explain(with_pods({"pending": [pending("default-scheduler", "Unschedulable", "no nodes")]}))
	contains(msg, "it uses scheduler \"default-scheduler\", not kai-scheduler")
}
