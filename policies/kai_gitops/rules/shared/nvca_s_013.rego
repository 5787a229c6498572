package kai_gitops.rules.shared.nvca_s_013

import data.kai_gitops.lib.nodes
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-S-013",
	"title": "Shared intent: only the intended nodes carry nvca.nvcf.nvidia.io/schedule=true",
	"severity": "warning",
	"scope": "live",
	"rationale": "A labelled node outside the intended set is counted as NVCF capacity and receives NVCF pods, taking it from the other tenants.",
	"remediation": "Remove the label from nodes that are not meant for NVCF, or add them to the shared-cluster intent in Git.",
	"source": "docs/policies.md#shared-cluster-mode",
}

extra := nodes.labelled_true - util.intended_set

violations contains v if {
	util.has_desired
	util.shared_intent == "shared"
	util.intended_known
	count(extra) > 0
	v := {
		"message": sprintf(
			"%d node(s) are labelled nvca.nvcf.nvidia.io/schedule=true but are not in the shared-cluster intent: %s%s; NVCA will place NVCF pods on them",
			[count(extra), data.kai_gitops.lib.nodes.sample(extra), data.kai_gitops.lib.nodes.more(extra)],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": sprintf("kubectl label nodes %s nvca.nvcf.nvidia.io/schedule-", [data.kai_gitops.lib.nodes.sample(extra)]),
	}
}
