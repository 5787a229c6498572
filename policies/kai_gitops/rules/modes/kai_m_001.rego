package kai_gitops.rules.modes.kai_m_001

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-M-001",
	"title": "KAI is installed either by the add-on or standalone, not both",
	"severity": "error",
	"scope": "static",
	"rationale": "The add-on manages release kai-scheduler and overwrites its values with the stack's; a second, standalone installation must not exist.",
	"remediation": "Either set addons.kaiScheduler.enabled: false in the environment file, or remove the standalone KAI values file from the cluster's config.",
	"source": "docs/policies.md#install-modes / user guide: Install KAI Scheduler (Use an existing or separately managed installation)",
}

violations contains v if {
	data.kai_gitops.lib.util.addon("kaiScheduler")
	util.desired.standalone_kai == true
	v := {
		"message": sprintf(
			"addons.kaiScheduler.enabled is true and a standalone KAI values file (%s) is declared; keep exactly one install mode",
			[object.get(util.desired.docs, "kai_values", "kai_values")],
		),
		"subject": null,
		"doc": util.desired.addons_doc,
		"path": ["addons", "kaiScheduler", "enabled"],
		"fix": null,
	}
}
