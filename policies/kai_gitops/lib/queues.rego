# Queue indexes and the two queue verdicts, built once per evaluation so rules look queues up by name
# (no O(n²) joins) and every rule means the same thing by "unlimited" and "capped".
package kai_gitops.lib.queues

import data.kai_gitops.lib.util

live_queues := object.get(util.live, "queues", [])

by_name := {q.name: q | some q in live_queues}

# Inline comprehensions, not helper functions called per queue: regorus calls cost ~10x a comprehension
# step, and these run once per queue (1,000 queues must evaluate in milliseconds).
parents := {q.name: p | some q in live_queues; p := {x | x := object.get(q, "parent", null); is_string(x); x != ""}}

used_by_pods := {n | some n in object.get(util.live.nvcf_pods, "queues_used", [])}

# A limited ancestor caps its children in KAI's hierarchical quota, so ancestors count as used.
used_with_ancestors := graph.reachable(parents, used_by_pods)

# --- Unlimited and capped: the one definition --------------------------------------------------------
#
# unlimited = quota -1, limit -1 and overQuotaWeight 1 (what NVCA requires of the queues NVCF uses);
# capped    = a limit other than -1: the mark of a cluster shared with other tenants (a finite quota
#             alone only guarantees a share, it caps no one).
#
# Rules never compare queue numbers themselves: they read the objects below, each computed at most once
# per evaluation and only when a rule asks for it (one function call per source, not per queue). Each maps
# queue name -> the resource kinds, in util.resource_kinds order, that are not unlimited (resp. capped);
# a queue with none is left out. The queues given must have complete resources.{cpu,gpu,memory}.
# {quota,limit,overQuotaWeight} numbers: live.queues and desired.extra_queues do (Python writes 0 for an
# absent number, and the engine refuses an incomplete live queue), default_queue_values is normalised here.

live_limited := queue_limited_kinds(live_queues)

live_capped := queue_capped_kinds(live_queues)

git_queues := object.get(util.desired, "extra_queues", [])

git_capped := queue_capped_kinds(git_queues)

values_limited := queue_limited_kinds(default_queue_values)

# ["cpu", "gpu", "memory"] is util.resource_kinds written inline: a rule reference per queue costs ~5%.
queue_limited_kinds(qs) := {q.name: kinds |
	some q in qs
	kinds := [k | some k in ["cpu", "gpu", "memory"]; t := q.resources[k]; [t.quota, t.limit, t.overQuotaWeight] != [-1, -1, 1]]
	count(kinds) > 0
}

queue_capped_kinds(qs) := {q.name: kinds |
	some q in qs
	kinds := [k | some k in ["cpu", "gpu", "memory"]; q.resources[k].limit != -1]
	count(kinds) > 0
}

# The two default queues as the KAI values declare them (defaultQueue.parentResources/childResources),
# named by that values key. Values may leave numbers out (absent = 0, as for live Queues:
# docs/configuration.md#what-is-read) or hold anything where a mapping belongs, so they are normalised first:
# builtins abort the evaluation on a type error.
default_queue_values := [q |
	some which in ["parentResources", "childResources"]
	given := queue_object_or_empty(object.get(default_queue_section, which, {}))
	resources := {k: t |
		some k in util.resource_kinds
		r := queue_object_or_empty(object.get(given, k, {}))
		t := {"quota": object.get(r, "quota", 0), "limit": object.get(r, "limit", 0), "overQuotaWeight": object.get(r, "overQuotaWeight", 0)}
	}
	q := {"name": which, "resources": resources}
]

# defaultQueue of the effective KAI values ({} when absent or not a mapping).
default_queue_section := queue_object_or_empty(object.get(object.get(util.desired, "kai_values_effective", {}), "defaultQueue", {}))

queue_object_or_empty(x) := x if is_object(x)

queue_object_or_empty(x) := {} if not is_object(x)

# --- The hierarchy once Git is applied (KAI-Q-020..023) ------------------------------------------------
#
# desired.queues holds every Queue Git declares (the default queues from the values and the queue files),
# each with the YAML path of its numbers; in a live evaluation the live queues Git does not declare keep
# their live spec. Numbers follow KAI: -1 is unlimited, an absent number is 0, CPU is in millicores, memory
# in MB (10^6 bytes), GPUs in devices (fractions allowed); live.queues[].allocated is in the same units.

git_declared := {q.name: q | some q in object.get(util.desired, "queues", [])}

# The cluster's queues: live, or in the PR check those of a snapshot (`check --live-snapshot`: input.live_queues,
# the Queues' specs and status.allocated only).
live_or_none := by_name if input.scope == "live"

live_or_none := snapshot_by_name if input.scope != "live"

snapshot_by_name := {q.name: q | some q in object.get(snapshot_section, "queues", [])}

snapshot_section := queue_object_or_empty(object.get(input, "live_queues", {}))

# The cluster's queues are known: a live evaluation, or a static one given a snapshot of them.
live_known if input.scope == "live"

live_known if is_object(input.live_queues)

# With `check --base`, the queues the base declares: the PR check judges the numbers the pull request changes.
base_declared := {q.name: q | some q in object.get(util.desired, "base_queues", [])}

# Where the allocation was read, for messages: the PR check names the snapshot and when it was taken.
allocation_note := "" if input.scope == "live"

allocation_note := sprintf("; allocated as of %s (%s)", [snapshot_section.taken_at, snapshot_section.source]) if {
	input.scope != "live"
	is_string(snapshot_section.taken_at)
}

allocation_note := sprintf("; allocated per %s (it does not say when it was taken)", [snapshot_section.source]) if {
	input.scope != "live"
	not is_string(object.get(snapshot_section, "taken_at", null))
}

# Where the cluster's queues were read, for messages about a queue missing from them.
cluster_note := "" if input.scope == "live"

cluster_note := sprintf(" (cluster's queues as of %s, %s)", [snapshot_section.taken_at, snapshot_section.source]) if {
	input.scope != "live"
	is_string(snapshot_section.taken_at)
}

cluster_note := sprintf(" (cluster's queues from %s)", [snapshot_section.source]) if {
	input.scope != "live"
	not is_string(object.get(snapshot_section, "taken_at", null))
}

planned := object.union(live_or_none, git_declared)

planned_parent := {name: p |
	some name in object.keys(planned)
	p := object.get(planned[name], "parent", null)
	is_string(p)
	p != ""
}

# Parent -> its children: one pass per distinct parent (a few dozen), not per pair of queues.
planned_children := {p: kids |
	some p in {x | some n in object.keys(planned_parent); x := planned_parent[n]}
	kids := {c | some c in object.keys(planned_parent); planned_parent[c] == p}
}

parent_edges := {n: {planned_parent[n]} | some n in object.keys(planned_parent)}

# Where a planned queue's number is set in Git: [doc, path], or [null, null] for a queue only live.
queue_number_at(name, key) := [q.doc, object.get(q.paths, key, null)] if {
	q := git_declared[name]
} else := [null, null]

# The unit a queue's number is counted in, for messages.
queue_unit := {"cpu": " millicores", "gpu": " GPU", "memory": " MB"}

# A quantity for a message: KAI rounds its queue metrics to 4 decimals; so do we, to hide float noise.
queue_amount(x) := sprintf("%v", [round(x * 10000) / 10000])

queue_number_shown(x) := "-1 (unlimited)" if x == -1

queue_number_shown(x) := data.kai_gitops.lib.queues.queue_amount(x) if x != -1
