package kai_gitops.rules.gates.nvca_g_001

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-001",
	"title": "KAIScheduler gate is enabled when this repo installs KAI",
	"severity": "error",
	"scope": "static",
	"rationale": "Installing KAI alone does not make NVCF use it: NVCA assigns workload pods to KAI only when the KAIScheduler feature gate is enabled.",
	"remediation": "Add \"KAIScheduler\" to the NVCA feature-gate list (selfManaged.featureGateValues for standalone NVCA values, global.nvcaOperator.selfManaged.featureGateValues in the environment file), keeping the other gates.",
	"source": "docs/policies.md#feature-gates / user guide: Install KAI Scheduler (add KAIScheduler to the existing NVCA feature-gate list)",
}

violations contains v if {
	util.kai_from_git
	util.gates_doc != null # Git declares a gate list; when it does not, NVCA's gates are not Git's to judge
	not data.kai_gitops.lib.util.gate_enabled_in_git("KAIScheduler")
	not data.kai_gitops.lib.util.gate_disabled_in_git("KAIScheduler")
	v := {
		"message": sprintf(
			"KAI is installed by this repo but the effective NVCA feature gates %s do not include KAIScheduler, so NVCF pods keep using default-scheduler; add \"KAIScheduler\" to the list",
			[json.marshal(object.get(util.gates, "effective", []))],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": util.gates_path,
		"fix": null,
	}
}
