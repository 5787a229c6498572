# Live queue indexes, built once per evaluation so rules look queues up by name (no O(n²) joins).
package kai_gitops.lib.queues

import data.kai_gitops.lib.util

live_queues := object.get(util.live, "queues", [])

by_name := {q.name: q | some q in live_queues}

# Inline comprehensions, not helper functions: regorus calls cost ~10x a comprehension step, and these
# run once per queue (1,000 queues must evaluate in milliseconds).
parents := {q.name: p | some q in live_queues; p := {x | x := object.get(q, "parent", null); is_string(x); x != ""}}

# Live queue resources are complete (cpu, gpu, memory, each with quota, limit, overQuotaWeight; Python
# fills absent numbers with 0 and checks this before evaluating), so direct field access is exact here.

# Queues with any resource triple other than quota -1, limit -1, overQuotaWeight 1.
limited_names := {q.name | some q in live_queues; some t in q.resources; [t.quota, t.limit, t.overQuotaWeight] != [-1, -1, 1]}

# Queues whose limit caps some resource: the mark of a cluster shared with other tenants.
capped_names := {q.name | some q in live_queues; some t in q.resources; t.limit != -1}

used_by_pods := {n | some n in object.get(util.live.nvcf_pods, "queues_used", [])}

# A limited ancestor caps its children in KAI's hierarchical quota, so ancestors count as used.
used_with_ancestors := graph.reachable(parents, used_by_pods)
