package kai_gitops.rules.queues.kai_q_001

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-Q-001",
	"title": "Default queue resources are unlimited (quota -1, limit -1, overQuotaWeight 1)",
	"severity": "error",
	"scope": "static",
	"rationale": "NVCA marks itself unhealthy unless both default queues have quota=-1, limit=-1, overQuotaWeight=1 for cpu, gpu and memory; chart defaults use quota 0. The queues are created only at install time, so a wrong value here sticks.",
	"remediation": "Set defaultQueue.parentResources and defaultQueue.childResources to {cpu,gpu,memory}: {quota: -1, limit: -1, overQuotaWeight: 1}. On an existing release helm upgrade does not change the live queues: also patch them, e.g. kubectl patch queues.scheduling.run.ai default-queue --type merge -p '{\"spec\":{\"resources\":...}}'.",
	"source": "SPEC §4.1, §4.2, §6 / seed: Install KAI Scheduler; Troubleshoot (resource violation for queue)",
}

queue_of := {"parentResources": "parentName", "childResources": "childName"}

nvca_kind := {"cpu": "CPU", "gpu": "GPU", "memory": "Memory"}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	dq := object.get(util.desired.kai_values_effective, "defaultQueue", {})
	some which, name_key in queue_of
	some kind in util.resource_kinds
	t := data.kai_gitops.lib.util.triple(object.get(dq, which, {}), kind)
	not data.kai_gitops.lib.util.unlimited(t)
	queue := object.get(dq, name_key, "?")
	v := {
		"message": sprintf(
			"defaultQueue.%s.%s is %s%s; NVCA requires quota=-1, limit=-1, overQuotaWeight=1 and would report \"%s resource violation for queue %s\". Set all three to -1, -1, 1",
			[which, kind, data.kai_gitops.lib.util.fmt_triple(t), inherited_note(which, kind), nvca_kind[kind], queue],
		),
		"subject": null,
		"doc": doc,
		"path": ["defaultQueue", which, kind],
		"fix": null,
	}
}

inherited_note(which, kind) := sprintf(" (not set: chart %s default)", [util.desired.defaults_version]) if {
	object.get(util.desired.kai_values_user, ["defaultQueue", which, kind], null) == null
} else := ""
