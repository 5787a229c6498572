package kai_gitops.rules.shared.nvca_s_011

import data.kai_gitops.lib.nodes
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-S-011",
	"title": "Shared intent: the NVCF nodes are labelled nvca.nvcf.nvidia.io/schedule=true",
	"severity": "error",
	"scope": "live",
	"rationale": "In Shared Cluster mode NVCA counts and schedules onto labelled nodes only; with no node labelled the mode is off and NVCA counts every node, including non-NVCF ones.",
	"remediation": "Label the NVCF nodes with exactly nvca.nvcf.nvidia.io/schedule=true (the value must be the lowercase string true).",
	"source": "docs/policies.md#shared-cluster-mode / user guide: Nodes running NVCF workloads must be labeled nvca.nvcf.nvidia.io/schedule=true",
}

missing := util.intended_set - nodes.labelled_true

violations contains v if {
	util.has_desired
	util.shared_intent == "shared"
	count(missing) > 0
	v := {
		"message": sprintf(
			"%d NVCF node(s) of the shared-cluster intent lack nvca.nvcf.nvidia.io/schedule=true: %s%s; NVCA will not use them",
			[count(missing), data.kai_gitops.lib.nodes.sample(missing), data.kai_gitops.lib.nodes.more(missing)],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": sprintf("kubectl label nodes %s nvca.nvcf.nvidia.io/schedule=true --overwrite", [data.kai_gitops.lib.nodes.sample(missing)]),
	}
}

violations contains v if {
	util.has_desired
	util.shared_intent == "shared"
	count(missing) == 0
	not nodes.shared_mode_on
	v := {
		"message": "shared-cluster intent is \"shared\" but no node is labelled nvca.nvcf.nvidia.io/schedule=true, so Shared Cluster mode is OFF and NVCA counts every node",
		"subject": null,
		"doc": null,
		"path": null,
		"fix": selector_fix,
	}
}

selector_fix := sprintf("kubectl label nodes -l %s nvca.nvcf.nvidia.io/schedule=true --overwrite", [selector_text]) if {
	util.has_selector
} else := null

selector_text := concat(",", pairs) if {
	util.has_selector
	selector := util.shared.selector
	pairs := [pair | some k in object.keys(selector); pair := sprintf("%s=%s", [k, selector[k]])]
}
