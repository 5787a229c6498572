package kai_gitops.rules.release.kai_r_002

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-002",
	"title": "KAI chart pin matches the version the compute plane stack installs",
	"severity": "error",
	"scope": "static",
	"rationale": "In add-on mode the stack upgrades release kai-scheduler to the version it pins; a different pin in the repo config means the checks here compare against a version that will never be installed.",
	"remediation": "Set the repo config's KAI chart pin to the stack's version, or pick the compute plane release whose stack pins the version you want.",
	"source": "docs/policies.md#install-modes / user guide: Install KAI Scheduler (Use the compute plane stack)",
}

violations contains v if {
	data.kai_gitops.lib.util.addon("kaiScheduler")
	pin := util.desired.kai_chart_pin
	stack := util.desired.stack_kai_version
	is_string(pin)
	is_string(stack)
	pin != stack
	v := {
		"message": sprintf(
			"the repo config pins KAI chart %s but the compute plane stack installs %s; set the pin to %s",
			[pin, stack, stack],
		),
		"subject": null,
		"doc": util.config_doc,
		"path": data.kai_gitops.lib.util.config_key_path("kaiChartVersion"),
		"fix": null,
	}
}
