package kai_gitops.rules.queues.kai_q_001

import data.kai_gitops.lib.queues
import data.kai_gitops.lib.util

meta := {
	"id": "KAI-Q-001",
	"title": "Default queue resources are unlimited (quota -1, limit -1, overQuotaWeight 1)",
	"severity": "error",
	"scope": "static",
	"rationale": "NVCA marks itself unhealthy unless both default queues have quota=-1, limit=-1, overQuotaWeight=1 for cpu, gpu and memory; chart defaults use quota 0. The queues are created only at install time, so a wrong value here sticks.",
	"remediation": "Set defaultQueue.parentResources and defaultQueue.childResources to {cpu,gpu,memory}: {quota: -1, limit: -1, overQuotaWeight: 1}. On an existing release helm upgrade does not change the live queues: also patch them, e.g. kubectl patch queues.scheduling.run.ai default-queue --type merge -p '{\"spec\":{\"resources\":...}}'.",
	"source": "docs/policies.md#default-queues / user guide: Install KAI Scheduler; Troubleshoot the integration (resource violation for queue)",
}

# The values key of each default queue's resources, its name key, and the chart's default name.
queue_of := {"parentResources": "parentName", "childResources": "childName"}

default_name := {"parentName": "default-parent-queue", "childName": "default-queue"}

nvca_kind := {"cpu": "CPU", "gpu": "GPU", "memory": "Memory"}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	some q in queues.default_queue_values
	some kind in queues.values_limited[q.name]
	t := q.resources[kind]
	v := {
		"message": sprintf(
			"defaultQueue.%s.%s is %s%s; NVCA requires quota=-1, limit=-1, overQuotaWeight=1 and would report \"%s resource violation for queue %s\". Set all three to -1, -1, 1",
			[q.name, kind, data.kai_gitops.lib.util.fmt_triple(t), inherited_note(q.name, kind), nvca_kind[kind], queue_name(queue_of[q.name])],
		),
		"subject": null,
		"doc": doc,
		"path": ["defaultQueue", q.name, kind],
		"fix": null,
	}
}

# The queue's name as the values set it, else the chart's default name (what the chart creates).
queue_name(key) := name if {
	name := object.get(queues.default_queue_section, key, null)
	is_string(name)
	name != ""
} else := default_name[key]

inherited_note(which, kind) := sprintf(" (not set: %s)", [util.chart_defaults]) if {
	object.get(util.desired.kai_values_user, ["defaultQueue", which, kind], null) == null
} else := ""
