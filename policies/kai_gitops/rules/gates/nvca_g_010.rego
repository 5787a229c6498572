package kai_gitops.rules.gates.nvca_g_010

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-010",
	"title": "Feature gates in the NVCA ConfigMap equal Git's effective list",
	"severity": "error",
	"scope": "live",
	"rationale": "Helm renders the effective gate list into ConfigMap nvca-operator/nvcfbackend-self-managed (capabilities); a difference means the NVCA release was not upgraded with the current Git values.",
	"remediation": "Apply the NVCA values from Git (add-on mode: apply the environment through the compute plane workflow; standalone: helm upgrade the nvca-operator release).",
	"source": "docs/policies.md#feature-gates (Git → ConfigMap capabilities)",
}

violations contains v if {
	util.gates_doc != null # Git declares a gate list (env file or NVCA values)
	cm := util.live.gate_hops.configmap
	is_array(cm)
	git := data.kai_gitops.lib.gates.signed(object.get(util.gates, "effective", []))
	live := data.kai_gitops.lib.gates.signed(cm)
	git != live
	v := {
		"message": sprintf(
			"ConfigMap nvca-operator/nvcfbackend-self-managed capabilities differ from Git's effective feature gates (%s); upgrade the NVCA release with the Git values",
			[data.kai_gitops.lib.gates.fmt_diff(git, live, "Git", "ConfigMap")],
		),
		"subject": data.kai_gitops.lib.util.configmap_subject("nvca-operator", "nvcfbackend-self-managed"),
		"doc": util.gates_doc,
		"path": util.gates_path,
		"fix": null,
	}
}
