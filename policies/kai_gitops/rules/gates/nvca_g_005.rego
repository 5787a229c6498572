package kai_gitops.rules.gates.nvca_g_005

import data.kai_gitops.lib.gates
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-005",
	"title": "Feature gate names are correctly cased",
	"severity": "error",
	"scope": "static",
	"rationale": "Gate names are case-sensitive: `kaischeduler` is an unknown name that NVCA ignores, so the intended gate is not applied.",
	"remediation": "Spell the gate exactly as NVCA does (the message gives the right spelling).",
	"source": "docs/policies.md#feature-gates (case-sensitive)",
}

violations contains v if {
	some i, item in object.get(util.gates, "user", [])
	name := data.kai_gitops.lib.gates.name(item)
	not name in gates.known
	right := gates.known_by_lower[lower(trim_space(name))]
	fixed := concat("", [data.kai_gitops.lib.gates.sign_text(item), right])
	v := {
		"message": sprintf(
			"feature gate %s is a typo of %s (names are case-sensitive; NVCA ignores it); write %s",
			[json.marshal(item), json.marshal(right), json.marshal(fixed)],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": data.kai_gitops.lib.util.gate_item_path(i),
		"fix": null,
	}
}
