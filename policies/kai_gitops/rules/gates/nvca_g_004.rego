package kai_gitops.rules.gates.nvca_g_004

import data.kai_gitops.lib.gates
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-004",
	"title": "Feature gate names are known to NVCA",
	"severity": "warning",
	"scope": "static",
	"rationale": "NVCA ignores unknown gate names with only a log warning, so a misspelt gate silently does nothing. A misspelling of a known gate is reported here when NVCA still runs as the item means, else as NVCA-G-005 (an error).",
	"remediation": "Fix or remove the unknown gate name; known names are listed in policies/kai_gitops/data/known_gates.json (extend it with a data file if your NVCA has newer gates).",
	"source": "docs/policies.md#feature-gates (unknown names are ignored by NVCA with a warning)",
}

violations contains v if {
	some i, item in object.get(util.gates, "user", [])
	name := data.kai_gitops.lib.gates.name(item)
	not name in gates.known
	not gates.known_by_lower[lower(trim_space(name))]
	v := {
		"message": sprintf(
			"feature gate %s is not a gate NVCA knows; NVCA ignores it%s. Known gates: %s",
			[json.marshal(item), sign_note(name), concat(", ", sort([g | some g in gates.known]))],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": data.kai_gitops.lib.util.gate_item_path(i),
		"fix": null,
	}
}

# A misspelt gate that NVCA ignores but whose gate still ends up as the item means (the add-on stack appends
# `KAIScheduler` when the list names only `KaiScheduler`): noise to clean up, not a broken gate (NVCA-G-005).
violations contains v if {
	some [i, item, right, as_meant, outcome] in gates.typos
	as_meant
	fixed := concat("", [data.kai_gitops.lib.gates.sign_text(item), right])
	v := {
		"message": sprintf(
			"feature gate %s is not a gate NVCA knows (a typo of %s: names are case-sensitive), so NVCA ignores it; it does no harm, as %s, but write %s or drop it",
			[json.marshal(item), json.marshal(right), outcome, json.marshal(fixed)],
		),
		"subject": null,
		"doc": util.gates_doc,
		"path": data.kai_gitops.lib.util.gate_item_path(i),
		"fix": null,
	}
}

# NVCA strips exactly one sign, so "--X" and "+-X" name the gate "-X": say so, it is easy to misread.
sign_note(name) := sprintf(" (only one leading sign is stripped, so this names the gate %s)", [json.marshal(name)]) if {
	some sign in ["+", "-"]
	startswith(name, sign)
} else := ""
