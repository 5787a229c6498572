package kai_gitops.rules.values.kai_v_003

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-003",
	"title": "KAI preempt and consolidation actions are disabled",
	"severity": "error",
	"scope": "static",
	"rationale": "With preempt or consolidation enabled KAI may evict or move running NVCF workload pods, which NVCA does not expect; KAI enables both unless told otherwise.",
	"remediation": "Set scheduler.actions.preempt.enabled: false and scheduler.actions.consolidation.enabled: false in the KAI values file, then helm upgrade the kai-scheduler release.",
	"source": "docs/policies.md#canonical-kai-values / user guide: Install KAI Scheduler (values.yaml)",
}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	some action in ["preempt", "consolidation"]
	path := ["scheduler", "actions", action, "enabled"]
	got := object.get(util.desired.kai_values_effective, path, null)
	got != false
	v := {
		"message": action_message(action, got),
		"subject": null,
		"doc": doc,
		"path": path,
		"fix": null,
	}
}

action_message(action, got) := sprintf(
	"scheduler.actions.%s.enabled is not set, so KAI runs the %s action and may evict NVCF pods; set it to false",
	[action, action],
) if got == null

action_message(action, got) := sprintf(
	"scheduler.actions.%s.enabled is %s, so KAI may evict NVCF pods; set it to false",
	[action, json.marshal(got)],
) if got != null
