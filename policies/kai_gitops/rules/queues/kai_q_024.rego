package kai_gitops.rules.queues.kai_q_024

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-024",
	"title": "Every parentQueue is declared in Git, or checked against the cluster's queues",
	"severity": "info",
	"scope": "static",
	"rationale": "A parentQueue that names no queue leaves the queue outside the hierarchy and its pods Pending (KAI-Q-023), but the PR check cannot tell a typo from a queue that exists only in the cluster unless it is given the cluster's queues. Said once per queue so the likeliest typo does not pass silently.",
	"remediation": "Check the parent's name; declare the parent in a queue file, or pass the cluster's queues with check --live-snapshot to have it verified (docs/ci.md#the-live-queues-from-a-snapshot-check-live-snapshot).",
	"source": "docs/policies.md#queue-hierarchy-and-quotas",
}

violations contains v if {
	not queues.live_known
	some child in object.keys(queues.planned_parent)
	parent := queues.planned_parent[child]
	not queues.planned[parent]
	at := data.kai_gitops.lib.queues.queue_number_at(child, "parent")
	v := {
		"message": sprintf(
			"Queue %s has parentQueue %s, which Git does not declare; not verified without --live-snapshot (if it is a typo, KAI will not schedule the queue's pods)",
			[child, parent],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(child),
		"doc": at[0],
		"path": at[1],
		"fix": null,
	}
}
