package kai_gitops.rules.gates.nvca_g_007

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-007",
	"title": "A feature gate is not both enabled and disabled",
	"severity": "warning",
	"scope": "static",
	"rationale": "When X and -X both appear NVCA disables X; the list says two things and only one of them happens.",
	"remediation": "Keep only the item you mean: X to enable, -X to disable.",
	"source": "docs/policies.md#feature-gates (disabled wins)",
}

user := object.get(util.gates, "user", [])

violations contains v if {
	some name in data.kai_gitops.lib.gates.disabled(user)
	some i, item in user
	data.kai_gitops.lib.gates.sign(item) == "+"
	data.kai_gitops.lib.gates.name(item) == name
	v := {
		"message": sprintf(
			"feature gate %s is both enabled (%s) and disabled (\"-%s\"); NVCA disables it. Remove the item you do not mean",
			[name, json.marshal(item), name],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": data.kai_gitops.lib.util.gate_item_path(i),
		"fix": null,
	}
}
