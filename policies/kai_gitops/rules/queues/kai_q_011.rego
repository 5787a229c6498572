package kai_gitops.rules.queues.kai_q_011

import data.kai_gitops.lib.queues

meta := {
	"id": "KAI-Q-011",
	"title": "Queues used by NVCF pods, and their parents, are unlimited (stricter than NVCA)",
	"severity": "error",
	"scope": "live",
	"rationale": "NVCA relies on unlimited queues for capacity and usage tracking but only checks the two default queues and reports the first violation; this policy is stricter than NVCA: it checks every queue NVCF pods use, their ancestors, and reports every limited resource.",
	"remediation": "Set quota -1, limit -1, overQuotaWeight 1 for cpu, gpu and memory on the queue (patch the live Queue and fix its manifest or values in Git).",
	"source": "docs/policies.md#default-queues / user guide: Set unlimited (-1) quotas and limits on the queues used for NVCF workloads",
}

violations contains v if {
	some name in queues.used_with_ancestors
	kinds := queues.live_limited[name]
	q := queues.by_name[name]
	bad := [sprintf("%s %s", [k, data.kai_gitops.lib.util.fmt_triple(q.resources[k])]) | some k in kinds]
	v := {
		"message": sprintf(
			"Queue %s %s but is limited: %s; this policy (stricter than NVCA) requires quota=-1, limit=-1, overQuotaWeight=1 on every resource",
			[name, role(name), concat("; ", bad)],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(name),
		"doc": null,
		"path": null,
		"fix": data.kai_gitops.lib.util.patch_queue_resources_cmd(name),
	}
}

role(name) := "is used by NVCF pods" if name in queues.used_by_pods

role(name) := "is the parent of a queue used by NVCF pods" if not name in queues.used_by_pods
