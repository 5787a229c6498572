package kai_gitops.rules.health.nvca_h_005

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-H-005",
	"title": "Exactly one NVCFBackend exists",
	"severity": "error",
	"scope": "live",
	"rationale": "The NVCA operator manages exactly one NVCFBackend in nvca-operator; none means NVCA is not installed, several mean conflicting agents.",
	"remediation": "Install the NVCA operator (none found) or remove the extra NVCFBackend objects so one remains.",
	"source": "docs/configuration.md#what-is-read (NVCFBackend, exactly one)",
}

backend := util.live.backend

violations contains v if {
	backend.count != 1
	v := {
		"message": sprintf(
			"found %d NVCFBackend objects; exactly one is expected in namespace nvca-operator",
			[backend.count],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": "kubectl get nvcfbackends.nvcf.nvidia.io -A",
	}
}
