package kai_gitops.rules.values.kai_v_012

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-012",
	"title": "kaiConfig.render and kaiConfigDeployer.enabled are not both on",
	"severity": "error",
	"scope": "static",
	"rationale": "From v0.17.0 the chart can render kai-config as a regular release resource (kaiConfig.render) instead of applying it with the post-install deployer Job (kaiConfigDeployer.enabled, default true); with both on the chart aborts rendering with \"kaiConfig.render and kaiConfigDeployer.enabled are mutually exclusive\", so helm install and upgrade fail.",
	"remediation": "With kaiConfig.render: true also set kaiConfigDeployer.enabled: false (the GitOps mode of the KAI docs), or drop kaiConfig.render.",
	"source": "docs/policies.md#how-kai-config-is-produced / KAI-Scheduler v0.17.0 deployments/kai-scheduler/templates/kai-config.yaml, docs/gitops/README.md",
}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	"kaiConfig" in object.get(util.desired, ["kai_chart", "sections"], [])
	object.get(util.desired.kai_values_effective, ["kaiConfig", "render"], false) == true
	object.get(util.desired.kai_values_effective, ["kaiConfigDeployer", "enabled"], true) == true
	v := {
		"message": sprintf(
			"kaiConfig.render and kaiConfigDeployer.enabled are both true%s: chart %s refuses to render (\"mutually exclusive\"); set kaiConfigDeployer.enabled: false",
			[deployer_note, util.desired.kai_chart_pin],
		),
		"subject": null,
		"doc": doc,
		"path": ["kaiConfig", "render"],
		"fix": null,
	}
}

deployer_note := " (kaiConfigDeployer.enabled by chart default)" if {
	object.get(util.desired.kai_values_user, ["kaiConfigDeployer", "enabled"], null) == null
} else := ""
