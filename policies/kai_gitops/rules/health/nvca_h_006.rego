package kai_gitops.rules.health.nvca_h_006

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-H-006",
	"title": "NVCFBackend agent status is healthy",
	"severity": "error",
	"scope": "live",
	"rationale": "NVCA writes \"healthy\" to status.agentStatus; an unhealthy agent shows as Unknown and stops taking NVCF work.",
	"remediation": "Read the component detail from NVCA's health endpoint and fix what it names (for kai-scheduler-queues see NVCA-H-002).",
	"source": "docs/policies.md#nvca-health-check / user guide: Troubleshoot the integration (kubectl get nvcfbackends.nvcf.nvidia.io -A)",
}

backend := util.live.backend

violations contains v if {
	backend.count == 1
	status := object.get(backend, "agent_status", null)
	not healthy(status)
	v := {
		"message": sprintf(
			"NVCFBackend %s/%s reports agent status %s, not \"healthy\"; read the health endpoint for the failing component",
			[backend.namespace, backend.name, json.marshal(status)],
		),
		"subject": util.live_backend,
		"doc": null,
		"path": null,
		"fix": "kubectl get --raw /api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz | jq .Components",
	}
}

healthy(status) if {
	is_string(status)
	lower(status) == "healthy"
}
