package kai_gitops.rules.queues.kai_q_023

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-023",
	"title": "Every parentQueue exists and no queue is its own ancestor",
	"severity": "error",
	"scope": "static",
	"rationale": "KAI schedules nothing in a queue whose parentQueue does not exist or whose parents loop back to it: the queue hangs outside the hierarchy and its pods stay Pending. A missing parent is judged only with the cluster's queues (live, a snapshot, or the PR check's --live-snapshot: a queue may exist live without Git declaring it); a cycle is judged on Git alone.",
	"remediation": "Point parentQueue at an existing queue (or declare the parent in a queue file), or break the cycle by giving one of its queues a parent outside it (or none).",
	"source": "docs/policies.md#queue-hierarchy-and-quotas",
}

violations contains v if {
	queues.live_known
	some child in object.keys(queues.planned_parent)
	parent := queues.planned_parent[child]
	not queues.planned[parent]
	at := data.kai_gitops.lib.queues.queue_number_at(child, "parent")
	v := {
		"message": sprintf(
			"Queue %s has parentQueue %s, which exists neither in Git nor in the cluster%s; KAI will not schedule its pods",
			[child, parent, queues.cluster_note],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(child),
		"doc": at[0],
		"path": at[1],
		"fix": null,
		"remediation": "Point parentQueue at a queue that exists (check the name), or declare the parent in a queue file.",
	}
}

# Queues that reach no root by following their parents: in a cycle, or below one. A missing parent counts
# as a root here (that is the branch above).
roots := {n | some n in object.keys(queues.planned); not queues.planned_parent[n]} | {n |
	some n in object.keys(queues.planned_parent)
	not queues.planned[queues.planned_parent[n]]
}

rooted := graph.reachable(queues.planned_children, roots)

stuck := {n | some n in object.keys(queues.planned); not n in rooted}

# A cycle's members each reach themselves through their parents; below a cycle a queue does not.
cycles := {members |
	some n in stuck
	ancestors := graph.reachable(queues.parent_edges, {queues.planned_parent[n]})
	n in ancestors
	members := {m | some m in ancestors; m in stuck; n in graph.reachable(queues.parent_edges, {queues.planned_parent[m]})}
}

violations contains v if {
	some members in cycles
	first := min(members)
	at := data.kai_gitops.lib.queues.queue_number_at(first, "parent")
	v := {
		"message": sprintf(
			"Queues %s form a parentQueue cycle (%s); KAI schedules none of their pods. Give one of them a parent outside the cycle",
			[concat(", ", sort(members)), concat(", ", [sprintf("%s → %s", [m, queues.planned_parent[m]]) | some m in sort(members)])],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(first),
		"doc": at[0],
		"path": at[1],
		"fix": null,
		"remediation": "Break the cycle: give one of its queues a parent outside it (or none).",
	}
}
