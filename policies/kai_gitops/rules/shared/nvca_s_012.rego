package kai_gitops.rules.shared.nvca_s_012

import data.kai_gitops.lib.nodes
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-S-012",
	"title": "nvca.nvcf.nvidia.io/schedule label values are exactly \"true\"",
	"severity": "warning",
	"scope": "live",
	"rationale": "NVCA compares the label value with the exact string \"true\": True, yes or 1 do not count, so such a node is treated as unlabelled.",
	"remediation": "Set the value to exactly true on NVCF nodes, or remove the label from nodes that are not meant for NVCF.",
	"source": "docs/policies.md#shared-cluster-mode (True, yes do not count)",
}

violations contains v if {
	some entry in object.get(nodes.nodes, "schedule_label", [])
	entry.value != "true"
	v := {
		"message": sprintf(
			"node %s has nvca.nvcf.nvidia.io/schedule=%s, which NVCA does not count (only the exact value \"true\" does); %s",
			[entry.name, json.marshal(entry.value), label_advice(entry.name)],
		),
		"subject": data.kai_gitops.lib.util.node_subject(entry.name),
		"doc": null,
		"path": null,
		"fix": label_fix(entry.name),
	}
}

meant_for_nvcf(name) if {
	util.shared_intent == "shared"
	name in util.intended_set
}

label_advice(name) := "set it to true" if meant_for_nvcf(name)

label_advice(name) := "remove the label" if {
	util.has_desired
	not meant_for_nvcf(name)
}

label_advice(_) := "set it to true if the node is meant for NVCF, otherwise remove the label" if not util.has_desired

label_fix(name) := sprintf("kubectl label node %s nvca.nvcf.nvidia.io/schedule=true --overwrite", [name]) if meant_for_nvcf(name)

label_fix(name) := sprintf("kubectl label node %s nvca.nvcf.nvidia.io/schedule-", [name]) if {
	util.has_desired
	not meant_for_nvcf(name)
}

# Without Git there is no intent to say which of the two fixes is right.
label_fix(_) := null if not util.has_desired
