package kai_gitops.rules.queues.kai_q_022

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-022",
	"title": "No queue's quota or limit is above its parent's",
	"severity": "error",
	"scope": "static",
	"rationale": "KAI never gives a subtree more than its parent's quota or limit, so a child's larger (or unlimited, -1) number is a promise KAI will not keep; its webhook only warns about it, and only when enabled. Judged per resource on the queues Git declares and, with a cluster, the live queues Git does not declare.",
	"remediation": "Set the child's quota and limit to at most its parent's (-1 only under an unlimited parent), or raise the parent's.",
	"source": "docs/policies.md#queue-hierarchy-and-quotas",
}

violations contains v if {
	some child in object.keys(queues.planned_parent)
	parent := queues.planned_parent[child]
	p := queues.planned[parent]
	some res in ["cpu", "gpu", "memory"]
	some field in ["quota", "limit"]
	ceiling := p.resources[res][field]
	ceiling != -1
	mine := queues.planned[child].resources[res][field]
	q022_above(mine, ceiling)
	unit := queues.queue_unit[res]
	at := data.kai_gitops.lib.queues.queue_number_at(child, sprintf("%s.%s", [res, field]))
	v := {
		"message": sprintf(
			"Queue %s: %s %s %s%s is above its parent %s's %s %s %s%s; KAI gives the subtree no more than the parent's, so set it to at most %s",
			[
				child, res, field, data.kai_gitops.lib.queues.queue_number_shown(mine), q022_unit(mine, unit),
				parent, res, field, data.kai_gitops.lib.queues.queue_amount(ceiling), unit,
				data.kai_gitops.lib.queues.queue_amount(ceiling),
			],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(child),
		"doc": at[0],
		"path": at[1],
		"fix": null,
	}
}

q022_above(mine, _) if mine == -1

q022_above(mine, ceiling) if {
	mine != -1
	mine > ceiling
}

q022_unit(x, _) := "" if x == -1

q022_unit(x, unit) := unit if x != -1
