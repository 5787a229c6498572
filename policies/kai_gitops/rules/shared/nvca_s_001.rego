package kai_gitops.rules.shared.nvca_s_001

import data.kai_gitops.lib.queues
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-S-001",
	"title": "Limited queues in Git come with Shared Cluster intent",
	"severity": "warning",
	"scope": "static",
	"rationale": "Limited KAI queues mean non-NVCF workloads share the cluster; NVCA must then run in Shared Cluster mode so it counts only NVCF nodes, or its capacity view is wrong.",
	"remediation": "Declare shared-cluster intent with the NVCF nodes (names or selector) in the repo config, or make the queue unlimited if only NVCF uses the cluster.",
	"source": "docs/policies.md#shared-cluster-mode / user guide: Use an existing or separately managed installation (Shared Cluster mode)",
}

violations contains v if {
	util.shared_intent != "shared"
	some q in queues.git_queues
	limited := queues.git_capped[q.name]
	v := {
		"message": sprintf(
			"queue %s in Git caps %s (limit is not -1), so non-NVCF workloads share this cluster, but the shared-cluster intent is \"%s\"; declare intent \"shared\" with the NVCF nodes",
			[q.name, concat(", ", limited), util.shared_intent],
		),
		"subject": data.kai_gitops.lib.util.queue_subject(q.name),
		"doc": object.get(q, "doc", null),
		"path": ["spec", "resources"],
		"fix": null,
	}
}
