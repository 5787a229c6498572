package kai_gitops.rules.health.nvca_h_001

import data.kai_gitops.lib.helm
import data.kai_gitops.lib.nvca

meta := {
	"id": "NVCA-H-001",
	"title": "KAI CRDs are installed when the KAIScheduler gate is on",
	"severity": "error",
	"scope": "live",
	"rationale": "With the KAIScheduler gate on NVCA lists KAI Queues; if the Queue kind is not served NVCA reports itself unhealthy with this exact message.",
	"remediation": "Install KAI (enable addons.kaiScheduler, or helm install kai-scheduler with the pinned version), or remove KAIScheduler from the NVCA feature gates.",
	"source": "docs/policies.md#nvca-health-check (step 1) / user guide: Troubleshoot the integration (KAI Scheduler is not installed)",
}

violations contains v if {
	nvca.not_installed_reported
	v := {
		"message": nvca.not_installed,
		"subject": data.kai_gitops.lib.util.crd_subject("queues.scheduling.run.ai"),
		"doc": null,
		"path": null,
		"fix": helm.install_kai_cmd,
	}
}
