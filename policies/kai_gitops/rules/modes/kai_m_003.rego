package kai_gitops.rules.modes.kai_m_003

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-M-003",
	"title": "Grove requires KAI",
	"severity": "error",
	"scope": "static",
	"rationale": "Grove builds its gang scheduling on KAI PodGroups; without KAI its workloads stay Pending.",
	"remediation": "Set addons.kaiScheduler.enabled: true (or declare a standalone KAI install), or set addons.groveOperator.enabled: false.",
	"source": "docs/policies.md#install-modes / nvcf-compute-plane stack: environments/base.yaml (KAI is required when enabling Grove or Dynamo)",
}

violations contains v if {
	data.kai_gitops.lib.util.addon("groveOperator")
	not util.kai_from_git
	v := {
		"message": "addons.groveOperator.enabled is true but KAI is neither enabled as an add-on nor declared standalone; enable addons.kaiScheduler",
		"subject": null,
		"doc": util.desired.addons_doc,
		"path": ["addons", "groveOperator", "enabled"],
		"fix": null,
	}
}
