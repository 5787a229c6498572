package kai_gitops.rules.release.kai_r_001

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-001",
	"title": "Values left to chart defaults are judged with the defaults of the pinned KAI minor version",
	"severity": "warning",
	"scope": "static",
	"rationale": "A value left out of the KAI values file takes the chart's default, and kai-gitops judges it (KAI-V-*, KAI-Q-001/002) with the defaults of the shipped chart-values file nearest the pin. Within one minor version the defaults are stable; across minors they change (queue quotas, values keys), so for a pin of another minor those findings may be wrong either way. Writing the values out removes the guess.",
	"remediation": "Write the values the message lists into the KAI values file (the integration guide's values.yaml has them all), or use a kai-gitops release that ships chart defaults for the pinned minor version.",
	"source": "docs/configuration.md#how-desired-state-is-interpreted (chart defaults change between versions)",
}

# Every KAI values path a static rule judges (KAI-V-001..004, KAI-Q-001/002).
judged_paths := array.concat(
	[
		["scheduler", "placementStrategy"],
		["scheduler", "plugins", "nodeplacement", "arguments", "gpu"],
		["scheduler", "plugins", "nodeplacement", "arguments", "cpu"],
		["scheduler", "actions", "preempt", "enabled"],
		["scheduler", "actions", "consolidation", "enabled"],
		["defaultQueue", "createDefaultQueue"],
		["defaultQueue", "parentName"],
		["defaultQueue", "childName"],
	],
	[["defaultQueue", which, kind, key] |
		some which in ["parentResources", "childResources"]
		some kind in util.resource_kinds
		some key in ["quota", "limit", "overQuotaWeight"]
	],
)

inherited := [concat(".", p) | some p in judged_paths; object.get(util.desired.kai_values_user, p, null) == null]

violations contains v if {
	is_string(util.desired.kai_values_doc) # standalone: add-on mode installs the stack's canonical values
	pin := util.desired.kai_chart_pin
	used := util.desired.defaults_version
	is_string(pin)
	is_string(used)
	kai_minor_line(pin) != kai_minor_line(used)
	count(inherited) > 0
	v := {
		"message": sprintf(
			"the repo pins KAI chart %s but kai-gitops has no chart defaults for the %s line and judges values the KAI values file leaves out by chart %s defaults, which may differ; write these %d value(s) out: %s",
			[pin, kai_minor_line(pin), used, count(inherited), concat(", ", inherited)],
		),
		"subject": null,
		"doc": util.desired.kai_values_doc,
		"path": null,
		"fix": null,
	}
}

# "v0.17.2" and "0.17.0-rc.1" -> "v0.17".
kai_minor_line(version) := sprintf("v%s", [concat(".", array.slice(split(trim_prefix(version, "v"), "."), 0, 2))])
