package kai_gitops.rules.shared.nvca_s_002

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-S-002",
	"title": "Shared Cluster intent names its NVCF nodes",
	"severity": "error",
	"scope": "static",
	"rationale": "Shared Cluster mode exists only while some node carries nvca.nvcf.nvidia.io/schedule=true; an intent without nodes or selector cannot be realised and leaves NVCA in dedicated mode.",
	"remediation": "List the NVCF node names or a node selector under the cluster's shared-cluster settings in the repo config.",
	"source": "docs/policies.md#shared-cluster-mode",
}

violations contains v if {
	util.shared_intent == "shared"
	count(util.intended_nodes) == 0
	not util.has_selector
	v := {
		"message": "shared-cluster intent is \"shared\" but neither node names nor a node selector are given; NVCA turns Shared Cluster mode on only for nodes labelled nvca.nvcf.nvidia.io/schedule=true",
		"subject": null,
		"doc": util.config_doc,
		"path": null,
		"fix": null,
	}
}
