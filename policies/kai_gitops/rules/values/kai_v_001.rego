package kai_gitops.rules.values.kai_v_001

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-001",
	"title": "KAI placement strategy is binpack",
	"severity": "warning",
	"scope": "static",
	"rationale": "NVCF expects KAI to bin-pack workload pods so whole nodes stay free for large functions; spread placement fragments GPUs.",
	"remediation": "Set scheduler.placementStrategy: binpack in the KAI values file, then helm upgrade the kai-scheduler release.",
	"source": "docs/policies.md#canonical-kai-values / user guide: Install KAI Scheduler (values.yaml)",
}

path := ["scheduler", "placementStrategy"]

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	effective := object.get(util.desired.kai_values_effective, path, null)
	effective != "binpack"
	v := {
		"message": placement_message(effective),
		"subject": null,
		"doc": doc,
		"path": path,
		"fix": null,
	}
}

placement_message(effective) := sprintf(
	"scheduler.placementStrategy is %s; NVCA requires \"binpack\". Set scheduler.placementStrategy: binpack",
	[json.marshal(effective)],
) if object.get(util.desired.kai_values_user, path, null) != null

placement_message(effective) := sprintf(
	"scheduler.placementStrategy is not set, so it is %s by %s; NVCA requires \"binpack\". Set scheduler.placementStrategy: binpack",
	[json.marshal(effective), util.chart_defaults],
) if object.get(util.desired.kai_values_user, path, null) == null
