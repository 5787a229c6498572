package kai_gitops.rules.shared.nvca_s_014

import data.kai_gitops.lib.nodes
import data.kai_gitops.lib.queues

meta := {
	"id": "NVCA-S-014",
	"title": "Limited queues in the cluster come with Shared Cluster mode on",
	"severity": "warning",
	"scope": "live",
	"rationale": "If NVCF and non-NVCF workloads share a cluster with limited KAI queues, Shared Cluster mode must be on so NVCA excludes non-NVCF nodes from capacity tracking and scheduling.",
	"remediation": "Declare shared-cluster intent with the NVCF nodes in Git and label them nvca.nvcf.nvidia.io/schedule=true.",
	"source": "docs/policies.md#shared-cluster-mode / user guide: If NVCF and non-NVCF workloads share a cluster with limited KAI queues, enable Shared Cluster mode",
}

limited := sort(object.keys(queues.live_capped))

violations contains v if {
	count(limited) > 0
	not nodes.shared_mode_on
	v := {
		"message": sprintf(
			"%d live queue(s) cap usage with a limit (%s%s), so non-NVCF workloads share this cluster, but no node is labelled nvca.nvcf.nvidia.io/schedule=true: Shared Cluster mode is off and NVCA counts every node",
			[count(limited), data.kai_gitops.lib.nodes.sample(limited), data.kai_gitops.lib.nodes.more(limited)],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": null,
	}
}
