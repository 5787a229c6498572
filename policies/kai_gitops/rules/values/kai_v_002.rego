package kai_gitops.rules.values.kai_v_002

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-002",
	"title": "KAI nodeplacement plugin uses gpu=binpack, cpu=spread",
	"severity": "warning",
	"scope": "static",
	"rationale": "The guide's values set the nodeplacement plugin arguments explicitly; chart defaults leave them to KAI's built-in behaviour, which is not what NVCA is tested with.",
	"remediation": "Set scheduler.plugins.nodeplacement.arguments to {gpu: binpack, cpu: spread} in the KAI values file, then helm upgrade the kai-scheduler release.",
	"source": "docs/policies.md#canonical-kai-values / user guide: Install KAI Scheduler (values.yaml)",
}

wanted := {"gpu": "binpack", "cpu": "spread"}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	some key, want in wanted
	path := ["scheduler", "plugins", "nodeplacement", "arguments", key]
	got := object.get(util.desired.kai_values_effective, path, null)
	got != want
	v := {
		"message": plugin_message(key, got, want),
		"subject": null,
		"doc": doc,
		"path": path,
		"fix": null,
	}
}

plugin_message(key, got, want) := sprintf(
	"scheduler.plugins.nodeplacement.arguments.%s is not set (KAI's built-in default applies); set it to %s",
	[key, json.marshal(want)],
) if got == null

plugin_message(key, got, want) := sprintf(
	"scheduler.plugins.nodeplacement.arguments.%s is %s; set it to %s",
	[key, json.marshal(got), json.marshal(want)],
) if got != null
