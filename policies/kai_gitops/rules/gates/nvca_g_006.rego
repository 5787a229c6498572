package kai_gitops.rules.gates.nvca_g_006

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-006",
	"title": "HelmAllowCPUNodes is not combined with HelmResourceConstraints",
	"severity": "error",
	"scope": "static",
	"rationale": "NVCA refuses to start when HelmAllowCPUNodes and HelmResourceConstraints are both on, and HelmResourceConstraints is on by default.",
	"remediation": "Remove \"HelmAllowCPUNodes\", or add \"-HelmResourceConstraints\" to the feature-gate list.",
	"source": "docs/policies.md#feature-gates",
}

violations contains v if {
	data.kai_gitops.lib.util.gate_enabled_in_git("HelmAllowCPUNodes")
	not data.kai_gitops.lib.util.gate_disabled_in_git("HelmResourceConstraints")
	v := {
		"message": "HelmAllowCPUNodes is enabled while HelmResourceConstraints is on (it is on by default): NVCA will not start. Remove HelmAllowCPUNodes or add \"-HelmResourceConstraints\"",
		"subject": null,
		"doc": util.gates_doc,
		"path": util.gates_path,
		"fix": null,
	}
}
