package kai_gitops.rules.health.nvca_h_003

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-H-003",
	"title": "NVCA's reported health agrees with the prediction from live Queues",
	"severity": "warning",
	"scope": "live",
	"rationale": "A disagreement means NVCA has not re-checked since the queues changed, runs with a different gate list than Git, or checks something this tool does not model; either way its verdict cannot be explained from the cluster.",
	"remediation": "Re-read kubectl get --raw /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz after a minute; if it still disagrees, compare the NVCFBackend status feature gates with Git and check the NVCA logs.",
	"source": "SPEC §5.3, §6 / seed: Troubleshoot the integration",
}

healthz := util.live.healthz

# Python may have no prediction to offer (null); treat it as no verdict rather than failing the evaluation.
prediction := p if {
	p := util.live.nvca_prediction
	is_object(p)
} else := {}

violations contains v if {
	is_object(healthz)
	is_string(prediction.status)
	healthz.reachable == true
	is_string(healthz.status)
	disagrees
	v := {
		"message": sprintf(
			"NVCA's health endpoint reports kai-scheduler-queues %s %s (HTTP %v) but the live Queues predict %s %s",
			[
				healthz.status, json.marshal(object.get(healthz, "errors", [])), object.get(healthz, "http_status", null),
				object.get(prediction, "status", null), json.marshal(object.get(prediction, "errors", [])),
			],
		),
		"subject": {"apiVersion": "v1", "kind": "Service", "namespace": "nvca-system", "name": "nvca"},
		"doc": null,
		"path": null,
		"fix": "kubectl get --raw /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz | jq '.Components[\"kai-scheduler-queues\"]'",
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
	sort(object.get(healthz, "errors", [])) != sort(object.get(prediction, "errors", []))
}
