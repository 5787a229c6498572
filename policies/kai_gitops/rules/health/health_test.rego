package kai_gitops.tests.health

import data.kai_gitops.lib.nvca
import data.kai_gitops.rules.health
import data.kai_gitops.testdata

nvca_words := "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI Scheduler (see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"

no_kai := data.kai_gitops.testdata.with_live({
	"queue_kind_served": false,
	"crds": object.union(testdata.live_part.crds, {"queues.scheduling.run.ai": false}),
	"queues": [],
	"nvca_prediction": {"status": "unhealthy", "errors": [nvca_words]},
	"healthz": {"reachable": true, "http_status": 503, "status": "unhealthy", "errors": [nvca_words]},
})

# NVCA-H-001
test_h001_installed_passes if {
	count(health.nvca_h_001.violations) == 0 with input as testdata.live_ok
}

test_h001_missing_crd_fails_with_nvca_words if {
	some v in health.nvca_h_001.violations with input as no_kai
	# Compared with a literal: regorus loses a rule's value when it was first computed under `with`.
	v.message == "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI Scheduler (see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"
	v.message == nvca.not_installed
	contains(v.fix, "--version v0.16.7")
}

test_h001_gate_off_everywhere_passes if {
	facts := object.union(no_kai, {
		"desired": {"gates": {"enabled": [], "effective": []}},
		"live": {"gate_hops": {"status": []}},
	})
	count(health.nvca_h_001.violations) == 0 with input as facts
}

# NVCA-H-002
test_h002_healthy_prediction_passes if {
	count(health.nvca_h_002.violations) == 0 with input as testdata.live_ok
}

test_h002_not_installed_is_left_to_h001 if {
	count(health.nvca_h_002.violations) == 0 with input as no_kai
}

violation := "CPU resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"

test_h002_resource_violation_fails_with_exact_string if {
	facts := data.kai_gitops.testdata.with_live({"nvca_prediction": {"status": "unhealthy", "errors": [violation]}, "healthz": null})
	vs := [v | some v in health.nvca_h_002.violations with input as facts]
	count(vs) == 1
	vs[0].message == violation
	vs[0].subject.name == "default-queue"
	startswith(vs[0].fix, "kubectl patch queues.scheduling.run.ai default-queue --type merge -p '{\"spec\":{\"resources\":")
}

test_h002_hierarchy_fix_removes_parent_of_parent if {
	err := "Queue hierarchy misconfigured: 'default-parent-queue' must be a parent queue and 'default-queue' must be a child of 'default-parent-queue'. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/main/docs/quickstart/default-queues.yaml for setting up the correct hierarchy"
	queues := [
		{"name": "default-parent-queue", "parent": "root", "has_resources": true, "resources": testdata.unlimited_resources},
		testdata.live_part.queues[1],
	]
	facts := data.kai_gitops.testdata.with_live({"queues": queues, "nvca_prediction": {"status": "unhealthy", "errors": [err]}})
	some v in health.nvca_h_002.violations with input as facts
	contains(v.fix, "kubectl patch queues.scheduling.run.ai default-parent-queue --type json")
}

test_h002_missing_queues_fix_creates_them if {
	err := "Expected the two default queues default-parent-queue and default-queue, but either one or both were not found. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/main/docs/quickstart/default-queues.yaml for setting up right hierarchy"
	facts := data.kai_gitops.testdata.with_live({"queues": [], "nvca_prediction": {"status": "unhealthy", "errors": [err]}})
	some v in health.nvca_h_002.violations with input as facts
	endswith(v.fix, "| kubectl create -f -")
	v.subject == null
}

# NVCA-H-003
test_h003_agreement_passes if {
	count(health.nvca_h_003.violations) == 0 with input as testdata.live_ok
}

test_h003_disagreement_warns if {
	facts := data.kai_gitops.testdata.with_live({"healthz": {"reachable": true, "http_status": 503, "status": "Unhealthy", "errors": [violation]}})
	some v in health.nvca_h_003.violations with input as facts
	contains(v.message, "reports kai-scheduler-queues Unhealthy")
}

test_h003_status_case_is_ignored if {
	facts := data.kai_gitops.testdata.with_live({"healthz": {"reachable": true, "http_status": 200, "status": "Healthy", "errors": []}})
	count(health.nvca_h_003.violations) == 0 with input as facts
}

# The KAIScheduler gate is off for the running NVCA: Python does not predict the queue check.
gate_off := data.kai_gitops.testdata.with_live({
	"queues": [],
	"nvca_prediction": {"status": "not-evaluated", "errors": []},
	"healthz": {"reachable": true, "http_status": 200, "status": null, "errors": []},
})

test_h002_not_evaluated_is_silent if {
	count(health.nvca_h_002.violations) == 0 with input as gate_off
}

test_h002_not_evaluated_ignores_stray_errors if {
	facts := object.union(gate_off, {"live": {"nvca_prediction": {"status": "not-evaluated", "errors": [violation]}}})
	count(health.nvca_h_002.violations) == 0 with input as facts
}

test_h003_not_evaluated_without_component_passes if {
	count(health.nvca_h_003.violations) == 0 with input as gate_off
}

test_h003_component_reported_while_gate_off_warns if {
	facts := object.union(gate_off, {"live": {"healthz": {"reachable": true, "http_status": 200, "status": "healthy", "errors": []}}})
	vs := [v | some v in health.nvca_h_003.violations with input as facts]
	count(vs) == 1
	startswith(vs[0].message, "NVCA's health endpoint reports a kai-scheduler-queues component (healthy [], HTTP 200) although the KAIScheduler gate is off")
}

test_h003_unreachable_health_with_gate_off_passes if {
	facts := object.union(gate_off, {"live": {"healthz": {"reachable": false, "http_status": null, "status": null, "errors": []}}})
	count(health.nvca_h_003.violations) == 0 with input as facts
}

# NVCA-H-004
test_h004_reachable_passes if {
	count(health.nvca_h_004.violations) == 0 with input as testdata.live_ok
}

test_h004_unreachable_is_reported if {
	facts := data.kai_gitops.testdata.with_live({"healthz": {"reachable": false, "http_status": null, "status": null, "errors": []}})
	count(health.nvca_h_004.violations) == 1 with input as facts
}

# NVCA-H-005
test_h005_one_backend_passes if {
	count(health.nvca_h_005.violations) == 0 with input as testdata.live_ok
}

test_h005_no_backend_fails if {
	facts := data.kai_gitops.testdata.with_live({"backend": {"count": 0, "name": null, "namespace": null, "agent_status": null}})
	some v in health.nvca_h_005.violations with input as facts
	startswith(v.message, "found 0 NVCFBackend objects")
}

# NVCA-H-006
test_h006_healthy_any_case_passes if {
	facts := data.kai_gitops.testdata.with_live({"backend": object.union(testdata.live_part.backend, {"agent_status": "Healthy"})})
	count(health.nvca_h_006.violations) == 0 with input as facts
}

test_h006_unknown_fails if {
	facts := data.kai_gitops.testdata.with_live({"backend": object.union(testdata.live_part.backend, {"agent_status": "Unknown"})})
	some v in health.nvca_h_006.violations with input as facts
	contains(v.message, "reports agent status \"Unknown\"")
}
