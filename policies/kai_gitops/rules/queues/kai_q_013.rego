package kai_gitops.rules.queues.kai_q_013

import data.kai_gitops.lib.queues
import data.kai_gitops.lib.util

meta := {
	"id": "KAI-Q-013",
	"title": "Queues named by NVCF pods exist",
	"severity": "error",
	"scope": "live",
	"rationale": "KAI does not schedule pods whose kai.scheduler/queue label names a queue that does not exist; they stay Pending.",
	"remediation": "Create the queue (unlimited, under default-parent-queue) or redeploy the function so its pods use default-queue.",
	"source": "docs/policies.md#workload-pods / user guide: Verify the integration",
}

violations contains v if {
	util.live.queue_kind_served == true
	some name in queues.used_by_pods
	not queues.by_name[name]
	v := {
		"message": sprintf(
			"NVCF pods are labelled kai.scheduler/queue=%s but no Queue %s exists; KAI will not schedule them",
			[name, name],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(name),
		"doc": null,
		"path": null,
		"fix": null,
	}
}
