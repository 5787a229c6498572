package kai_gitops.rules.queues.kai_q_020

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-020",
	"title": "A quota or limit Git changes is not below what the queue has allocated now",
	"severity": "error",
	"scope": "static",
	"rationale": "KAI's queue webhook checks quotas only opt-in and only as warnings, so a change that cuts a queue's quota or limit below what its running work holds (status.allocated, its children's included) goes through: that work becomes over-quota and is the first KAI reclaims, and above a limit it is preempted. Judged only where the live allocation is known (a cluster, a snapshot, or the PR check given one with --live-snapshot): Git alone cannot say.",
	"remediation": "Keep the quota or limit at or above the allocation, or drain the queue first; to apply the cut anyway, review the work it affects and run `kai-gitops reconcile --apply --allow-over-quota`.",
	"source": "docs/policies.md#queue-hierarchy-and-quotas",
}

verb := {"quota": "becomes over-quota (reclaimed first)", "limit": "is over the limit (preempted)"}

violations contains v if {
	some name in object.keys(queues.git_declared)
	wanted := queues.git_declared[name]
	current := queues.live_or_none[name]
	before := object.get(queues.base_declared, name, current)
	allocation := object.get(current, "allocated", null)
	is_object(allocation)
	some res in ["cpu", "gpu", "memory"]
	some field in ["quota", "limit"]
	new := wanted.resources[res][field]
	now := before.resources[res][field]
	new != now
	new != -1
	held := allocation[res]
	new < held
	unit := queues.queue_unit[res]
	at := data.kai_gitops.lib.queues.queue_number_at(name, sprintf("%s.%s", [res, field]))
	v := {
		"message": sprintf(
			"Queue %s: Git sets %s %s %s%s (%s %s), below the %s%s its running work holds now (status.allocated): %s%s of running work %s%s%s",
			[
				name, res, field, data.kai_gitops.lib.queues.queue_amount(new), unit,
				q020_before_label(name),
				data.kai_gitops.lib.queues.queue_number_shown(now),
				data.kai_gitops.lib.queues.queue_amount(held), unit,
				data.kai_gitops.lib.queues.queue_amount(held - new), unit, verb[field],
				q020_non_preemptible_note(current, res, new, unit),
				queues.allocation_note,
			],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(name),
		"doc": at[0],
		"path": at[1],
		"fix": null,
	}
}

# Non-preemptible work must fit in the quota: KAI admits no new non-preemptible job while it does not.
q020_non_preemptible_note(q, res, new, unit) := sprintf("; %s%s of it is non-preemptible", [data.kai_gitops.lib.queues.queue_amount(held), unit]) if {
	held := object.get(data.kai_gitops.lib.queues.queue_object_or_empty(object.get(q, "allocated_non_preemptible", {})), res, 0)
	is_number(held)
	held > new
} else := ""

# What the new number is compared with: the base ref's in the PR check with --base, else the live spec.
q020_before_label(name) := "base" if queues.base_declared[name]

q020_before_label(name) := "live" if not queues.base_declared[name]
