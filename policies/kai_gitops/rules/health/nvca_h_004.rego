package kai_gitops.rules.health.nvca_h_004

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-H-004",
	"title": "NVCA's health endpoint can be read",
	"severity": "info",
	"scope": "live",
	"rationale": "Without the health endpoint only the prediction is available; NVCA's own verdict cannot be confirmed.",
	"remediation": "Check that service nvca in nvca-system exists and that your credentials may use the services/proxy subresource.",
	"source": "docs/policies.md#nvca-health-check (the health endpoint)",
}

violations contains v if {
	util.live.healthz.reachable == false
	v := {
		"message": "NVCA's health endpoint /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz could not be read; only the predicted verdict is shown",
		"subject": {"apiVersion": "v1", "kind": "Service", "namespace": "nvca-system", "name": "nvca"},
		"doc": null,
		"path": null,
		"fix": "kubectl get --raw /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz",
	}
}
