package kai_gitops.rules.gates.nvca_g_002

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-002",
	"title": "KAI is installed but explicitly disabled for NVCA (-KAIScheduler)",
	"severity": "warning",
	"scope": "static",
	"rationale": "With -KAIScheduler NVCA keeps NVCF pods on the default scheduler although KAI runs; this is allowed (e.g. while KAI is being validated) but usually unintended.",
	"remediation": "Remove \"-KAIScheduler\" from the feature-gate list once KAI is ready, or disable the KAI add-on if it is not wanted.",
	"source": "docs/policies.md#feature-gates / user guide: Install KAI Scheduler (unless explicitly disabled with -KAIScheduler)",
}

violations contains v if {
	util.kai_from_git
	some i, item in object.get(util.gates, "user", [])
	data.kai_gitops.lib.gates.sign(item) == "-"
	data.kai_gitops.lib.gates.name(item) == "KAIScheduler"
	v := {
		"message": sprintf(
			"feature gate item %s disables KAIScheduler: KAI is installed but NVCA will not use it; remove the item when KAI should schedule NVCF pods",
			[json.marshal(item)],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": data.kai_gitops.lib.util.gate_item_path(i),
		"fix": null,
	}
}
