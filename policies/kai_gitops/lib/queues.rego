# Live queue indexes, built once per evaluation so rules look queues up by name (no O(n²) joins).
package kai_gitops.lib.queues

import data.kai_gitops.lib.util

live_queues := object.get(util.live, "queues", [])

by_name := {q.name: q | some q in live_queues}

parent_of(q) := {q.parent} if {
	is_string(q.parent)
	q.parent != ""
} else := set()

parents := {q.name: parent_of(q) | some q in live_queues}

used_by_pods := {n | some n in object.get(util.live.nvcf_pods, "queues_used", [])}

# A limited ancestor caps its children in KAI's hierarchical quota, so ancestors count as used.
used_with_ancestors := graph.reachable(parents, used_by_pods)
