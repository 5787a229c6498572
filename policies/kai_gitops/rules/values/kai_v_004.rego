package kai_gitops.rules.values.kai_v_004

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-004",
	"title": "Canonical KAI values are written out, not inherited from chart defaults",
	"severity": "warning",
	"scope": "static",
	"rationale": "Values omitted from the file take the default of whatever chart version is installed; a chart upgrade can silently change them (the default queue quota is 0 in current charts).",
	"remediation": "Copy the complete values.yaml from the KAI integration guide (scheduler and defaultQueue sections) into the KAI values file.",
	"source": "docs/policies.md#canonical-kai-values / user guide: Install KAI Scheduler (values.yaml)",
}

canonical_paths := array.concat(
	[
		["scheduler", "placementStrategy"],
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

# Only keys whose inherited value happens to be right: wrong values are other rules' findings.
inherited := [concat(".", p) |
	some p in canonical_paths
	object.get(util.desired.kai_values_user, p, null) == null
	object.get(util.desired.kai_values_effective, p, null) == canonical(p)
]

canonical(p) := "binpack" if p[1] == "placementStrategy"

canonical(p) := true if p[1] == "createDefaultQueue"

canonical(p) := "default-parent-queue" if p[1] == "parentName"

canonical(p) := "default-queue" if p[1] == "childName"

canonical(p) := 1 if p[3] == "overQuotaWeight"

canonical(p) := -1 if p[3] in {"quota", "limit"}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	count(inherited) > 0
	v := {
		"message": sprintf(
			"%d canonical KAI value(s) are not set and rely on %s: %s; write them out",
			[count(inherited), util.chart_defaults, concat(", ", inherited)],
		),
		"subject": null,
		"doc": doc,
		"path": null,
		"fix": null,
	}
}
