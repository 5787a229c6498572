package kai_gitops.rules.queues.kai_q_012

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-Q-012",
	"title": "Every Queue has a spec.resources block",
	"severity": "error",
	"scope": "live",
	"rationale": "NVCA dereferences spec.resources without a nil check and crashes on a queue without it (KAI's admission webhook normally rejects such queues); other tools treat the missing block as all zeros.",
	"remediation": "Patch the queue with an explicit spec.resources block (unlimited for queues NVCF uses).",
	"source": "docs/policies.md#nvca-health-check (a queue without spec.resources makes NVCA crash)",
}

violations contains v if {
	some q in object.get(util.live, "queues", [])
	q.has_resources == false
	v := {
		"message": sprintf(
			"Queue %s has no spec.resources block: NVCA crashes on it and KAI treats every limit as 0; add explicit resources",
			[q.name],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(q.name),
		"doc": null,
		"path": null,
		"fix": data.kai_gitops.lib.util.patch_queue_resources_cmd(q.name),
	}
}
