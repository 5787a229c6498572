package kai_gitops.rules.health.nvca_h_003

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-H-003",
	"title": "NVCA's reported health agrees with the prediction from live Queues",
	"severity": "warning",
	"scope": "live",
	"rationale": "A disagreement means NVCA has not re-checked since the queues changed, runs with a different gate list than Git, or checks something this tool does not model; either way its verdict cannot be explained from the cluster.",
	"remediation": "Re-read kubectl get --raw /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz after a minute; if it still disagrees, compare the NVCFBackend status feature gates with Git and check the NVCA logs.",
	"source": "docs/policies.md#nvca-health-check / user guide: Troubleshoot the integration",
}

healthz := util.live.healthz

# Python may have no prediction to offer (null); treat it as no verdict rather than failing the evaluation.
prediction := p if {
	p := util.live.nvca_prediction
	is_object(p)
} else := {}

# "not-evaluated": the KAIScheduler gate is off for the running NVCA (Python reads the NVCFBackend's
# rolled-out gates first, then spec/overrides, the ConfigMap and Git), so NVCA should not run the check.
not_evaluated if prediction.status == "not-evaluated"

# NVCA's answer names the kai-scheduler-queues component (status is null when the component is absent).
component_reported if {
	is_object(healthz)
	healthz.reachable == true
	is_string(healthz.status)
}

service := {"apiVersion": "v1", "kind": "Service", "namespace": "nvca-system", "name": "nvca"}

component_fix := "kubectl get --raw /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz | jq '.Components[\"kai-scheduler-queues\"]'"

violations contains v if {
	component_reported
	is_string(prediction.status)
	not not_evaluated
	disagrees
	v := {
		"message": sprintf(
			"NVCA's health endpoint reports kai-scheduler-queues %s %s (HTTP %v) but the live Queues predict %s %s",
			[
				healthz.status, json.marshal(object.get(healthz, "errors", [])), object.get(healthz, "http_status", null),
				prediction.status, json.marshal(object.get(prediction, "errors", [])),
			],
		),
		"subject": service,
		"doc": null,
		"path": null,
		"fix": component_fix,
	}
}

# The check runs although the gates say it should not: NVCA's real gate list is not the one the
# NVCFBackend shows (stale status, a restart pending), so every gate-based conclusion here is suspect.
violations contains v if {
	component_reported
	not_evaluated
	v := {
		"message": sprintf(
			"NVCA's health endpoint reports a kai-scheduler-queues component (%s %s, HTTP %v) although the KAIScheduler gate is off in the gates NVCA was given, so NVCA should not run that check: NVCA runs with other feature gates than the NVCFBackend shows; compare its status.featureGate.values with Git and restart NVCA if they are stale",
			[healthz.status, json.marshal(object.get(healthz, "errors", [])), object.get(healthz, "http_status", null)],
		),
		"subject": service,
		"doc": null,
		"path": null,
		"fix": component_fix,
	}
}

# Helpers are evaluated for every facts document, so they check types before calling builtins.
disagrees if {
	is_string(healthz.status)
	is_string(prediction.status)
	lower(healthz.status) != lower(prediction.status)
}

disagrees if {
	is_object(healthz)
	is_array(object.get(healthz, "errors", []))
	is_array(object.get(prediction, "errors", []))
	sort(object.get(healthz, "errors", [])) != sort(object.get(prediction, "errors", []))
}
