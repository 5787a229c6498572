package kai_gitops.rules.queues.kai_q_002

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-Q-002",
	"title": "Default queues are created with the names NVCA expects",
	"severity": "error",
	"scope": "static",
	"rationale": "NVCA looks for exactly default-parent-queue and default-queue (and the pod-grouper falls back to default-queue whatever childName says); other names or no default queues make NVCA unhealthy.",
	"remediation": "Set defaultQueue.createDefaultQueue: true, defaultQueue.parentName: default-parent-queue and defaultQueue.childName: default-queue in the KAI values file.",
	"source": "docs/policies.md#default-queues / user guide: Install KAI Scheduler",
}

wanted := {"createDefaultQueue": true, "parentName": "default-parent-queue", "childName": "default-queue"}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	some key, want in wanted
	got := object.get(util.desired.kai_values_effective, ["defaultQueue", key], null)
	got != want
	v := {
		"message": sprintf(
			"defaultQueue.%s is %s; NVCA requires %s. Set defaultQueue.%s: %s",
			[key, json.marshal(got), json.marshal(want), key, json.marshal(want)],
		),
		"subject": null,
		"doc": doc,
		"path": ["defaultQueue", key],
		"fix": null,
	}
}
