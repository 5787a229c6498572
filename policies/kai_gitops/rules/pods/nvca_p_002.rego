package kai_gitops.rules.pods.nvca_p_002

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-P-002",
	"title": "NVCF workload pods carry the kai.scheduler/queue label",
	"severity": "warning",
	"scope": "live",
	"rationale": "NVCA labels every pod it creates with kai.scheduler/queue=default-queue; a pod without it was not created by a KAI-aware NVCA and falls into the pod-grouper's fallback queue.",
	"remediation": "Redeploy the function so NVCA recreates its pods with the queue label; never patch pods.",
	"source": "docs/policies.md#workload-pods",
}

violations contains v if {
	some p in object.get(util.live.nvcf_pods, "missing_queue_label", [])
	v := {
		"message": sprintf(
			"NVCF pod %s/%s has no kai.scheduler/queue label; redeploy its function so NVCA sets kai.scheduler/queue=default-queue",
			[p.namespace, p.name],
		),
		"subject": data.kai_gitops.lib.util.pod_subject(p.namespace, p.name),
		"doc": null,
		"path": null,
		"fix": null,
	}
}
