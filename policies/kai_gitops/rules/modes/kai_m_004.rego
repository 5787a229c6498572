package kai_gitops.rules.modes.kai_m_004

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-M-004",
	"title": "Dynamo requires Grove",
	"severity": "error",
	"scope": "static",
	"rationale": "Dynamo's multi-role inference services are scheduled through Grove; Dynamo without Grove cannot place them.",
	"remediation": "Set addons.groveOperator.enabled: true (which in turn needs addons.kaiScheduler.enabled: true), or set addons.dynamoOperator.enabled: false.",
	"source": "docs/policies.md#install-modes / user guide: Schedule multi-Pod workloads",
}

violations contains v if {
	data.kai_gitops.lib.util.addon("dynamoOperator")
	not data.kai_gitops.lib.util.addon("groveOperator")
	v := {
		"message": "addons.dynamoOperator.enabled is true but addons.groveOperator.enabled is not; enable the Grove add-on",
		"subject": null,
		"doc": util.desired.addons_doc,
		"path": ["addons", "dynamoOperator", "enabled"],
		"fix": null,
	}
}
