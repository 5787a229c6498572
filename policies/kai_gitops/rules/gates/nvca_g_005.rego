package kai_gitops.rules.gates.nvca_g_005

import data.kai_gitops.lib.gates
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-005",
	"title": "Feature gate names are correctly cased",
	"severity": "error",
	"scope": "static",
	"rationale": "Gate names are case-sensitive: `kaischeduler` is an unknown name that NVCA ignores, so the intended gate is not applied. An error when NVCA then runs other than the item means (in add-on mode the stack may append the right gate itself: then NVCA-G-004 warns instead).",
	"remediation": "Spell the gate exactly as NVCA does (the message gives the right spelling); in add-on mode, remove a disabling typo of a gate the add-on needs (`-KaiScheduler`): the stack turns that gate on itself.",
	"source": "docs/policies.md#feature-gates (case-sensitive)",
}

violations contains v if {
	some [i, item, right, as_meant, outcome] in gates.typos
	not as_meant
	v := {
		"message": sprintf(
			"feature gate %s is a typo of %s (names are case-sensitive; NVCA ignores it, so %s); %s",
			[json.marshal(item), json.marshal(right), outcome, data.kai_gitops.lib.gates.typo_fix(item, right)],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": data.kai_gitops.lib.util.gate_item_path(i),
		"fix": null,
	}
}
