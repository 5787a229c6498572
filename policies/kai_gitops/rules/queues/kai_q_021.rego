package kai_gitops.rules.queues.kai_q_021

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-021",
	"title": "A queue's children's quotas add up to no more than its own quota",
	"severity": "error",
	"scope": "static",
	"rationale": "A parent's quota is what KAI guarantees its whole subtree; children whose quotas add up to more are promised resources that do not exist, and KAI's webhook only warns about it (and only when enabled), so a child's quota silently stops being a guarantee. Judged per resource on the queues Git declares and, with a cluster, the live queues Git does not declare; unlimited (-1) quotas are left to KAI-Q-022.",
	"remediation": "Lower the children's quotas so they add up to at most the parent's, or raise the parent's quota.",
	"source": "docs/policies.md#queue-hierarchy-and-quotas",
}

violations contains v if {
	some parent in object.keys(queues.planned_children)
	p := queues.planned[parent]
	some res in ["cpu", "gpu", "memory"]
	budget := p.resources[res].quota
	budget != -1
	given := {kid: q | some kid in queues.planned_children[parent]; q := queues.planned[kid].resources[res].quota; q != -1; q > 0}
	total := sum([given[k] | some k in object.keys(given)])
	total > budget
	unit := queues.queue_unit[res]
	at := data.kai_gitops.lib.queues.queue_number_at(parent, sprintf("%s.quota", [res]))
	v := {
		"message": sprintf(
			"Queue %s: its children's %s quotas add up to %s%s (%s), more than its own %s quota %s%s by %s%s; KAI cannot guarantee every child its quota",
			[
				parent, res, data.kai_gitops.lib.queues.queue_amount(total), unit,
				concat(", ", [sprintf("%s %s", [k, data.kai_gitops.lib.queues.queue_amount(given[k])]) | some k in sort(object.keys(given))]),
				res, data.kai_gitops.lib.queues.queue_amount(budget), unit,
				data.kai_gitops.lib.queues.queue_amount(total - budget), unit,
			],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(parent),
		"doc": at[0],
		"path": at[1],
		"fix": null,
	}
}
