package kai_gitops.rules.shared.nvca_s_010

import data.kai_gitops.lib.nodes
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-S-010",
	"title": "Dedicated intent: no node is labelled nvca.nvcf.nvidia.io/schedule=true",
	"severity": "error",
	"scope": "live",
	"rationale": "There is no switch: one node labelled nvca.nvcf.nvidia.io/schedule=true turns Shared Cluster mode on, after which NVCA ignores every unlabelled node for capacity and pins NVCF pods to the labelled ones.",
	"remediation": "Remove the label from the nodes, or declare shared-cluster intent with these nodes in the repo config.",
	"source": "docs/policies.md#shared-cluster-mode",
}

violations contains v if {
	util.has_desired
	util.shared_intent == "dedicated"
	nodes.shared_mode_on
	v := {
		"message": sprintf(
			"shared-cluster intent is \"dedicated\" but %d node(s) are labelled nvca.nvcf.nvidia.io/schedule=true (%s%s), which turns Shared Cluster mode on: NVCA ignores every other node",
			[count(nodes.labelled_true), data.kai_gitops.lib.nodes.sample(nodes.labelled_true), data.kai_gitops.lib.nodes.more(nodes.labelled_true)],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": "kubectl label nodes -l nvca.nvcf.nvidia.io/schedule=true nvca.nvcf.nvidia.io/schedule-",
	}
}
