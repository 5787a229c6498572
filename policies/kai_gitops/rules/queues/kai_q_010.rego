package kai_gitops.rules.queues.kai_q_010

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-010",
	"title": "default-queue is a child of default-parent-queue (stricter than NVCA)",
	"severity": "error",
	"scope": "live",
	"rationale": "NVCA accepts default-queue under any non-empty parent; this policy is stricter than NVCA and requires the parent the guide sets up, default-parent-queue, so the unlimited parent is what caps NVCF work.",
	"remediation": "Patch default-queue's spec.parentQueue to default-parent-queue, and set defaultQueue.parentName: default-parent-queue in the KAI values.",
	"source": "docs/policies.md#nvca-health-check (NVCA quirk: any non-empty parent passes) / user guide: NVCA expects a parent queue named default-parent-queue and a child queue named default-queue",
}

violations contains v if {
	q := queues.by_name["default-queue"]
	parent := object.get(q, "parent", null)
	parent != "default-parent-queue"
	v := {
		"message": sprintf(
			"Queue default-queue has parent %s; this policy (stricter than NVCA, which accepts any non-empty parent) requires \"default-parent-queue\"",
			[json.marshal(parent)],
		),
		"subject": data.kai_gitops.lib.util.queue_subject("default-queue"),
		"doc": null,
		"path": null,
		"fix": "kubectl patch queues.scheduling.run.ai default-queue --type merge -p '{\"spec\":{\"parentQueue\":\"default-parent-queue\"}}'",
	}
}
