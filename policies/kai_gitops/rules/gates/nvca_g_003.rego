package kai_gitops.rules.gates.nvca_g_003

import data.kai_gitops.lib.nvca
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-003",
	"title": "KAIScheduler gate is enabled but this repo installs no KAI",
	"severity": "warning",
	"scope": "static",
	"rationale": "With the gate on and no KAI CRDs NVCA goes unhealthy; that is fine only if KAI is installed and managed outside this repo.",
	"remediation": "Enable addons.kaiScheduler (add-on mode) or declare the standalone KAI values file in the repo config; or remove KAIScheduler from the feature gates.",
	"source": "docs/policies.md#feature-gates / user guide: Troubleshoot the integration (KAI Scheduler is not installed)",
}

violations contains v if {
	data.kai_gitops.lib.util.gate_enabled_in_git("KAIScheduler")
	not util.kai_from_git
	v := {
		"message": sprintf(
			"the KAIScheduler feature gate is enabled but this repo installs no KAI (add-on off, no standalone values); unless KAI is installed elsewhere NVCA reports \"%s\"",
			[nvca.not_installed],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": util.gates_path,
		"fix": null,
	}
}
