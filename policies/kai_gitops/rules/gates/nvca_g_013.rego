package kai_gitops.rules.gates.nvca_g_013

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-013",
	"title": "No NVCFBackend feature-gate overrides hide Git's intent",
	"severity": "warning",
	"scope": "live",
	"rationale": "spec.overrides.featureGate.values replaces the gate list from Git and is wiped by the next Helm upgrade; while present, Git does not describe what NVCA runs, and the next upgrade changes behaviour.",
	"remediation": "Move the wanted gates into the Git feature-gate list, then remove spec.overrides.featureGate from the NVCFBackend.",
	"source": "docs/policies.md#feature-gates (overrides replace the list and are wiped by the next Helm upgrade)",
}

violations contains v if {
	overrides := util.live.gate_hops.overrides
	is_array(overrides)
	backend := util.live.backend
	v := {
		"message": sprintf(
			"NVCFBackend %s/%s has spec.overrides.featureGate.values %s, which replace %s until the next Helm upgrade wipes them%s",
			[backend.namespace, backend.name, json.marshal(overrides), replaced, without_git_note],
		),
		"subject": util.live_backend,
		"doc": null,
		"path": null,
		"fix": sprintf(
			"kubectl -n %s patch nvcfbackends.nvcf.nvidia.io %s --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/overrides/featureGate\"}]'",
			[backend.namespace, backend.name],
		),
	}
}

# What the overrides stand in for: Git's list when the run read Git; without it (doctor with no --repo) the list
# the operator rendered into the NVCFBackend's spec, the only one the cluster shows.
replaced := sprintf("the Git list %s", [json.marshal(object.get(util.gates, "effective", []))]) if {
	util.has_desired
} else := sprintf("spec.featureGate.values %s", [json.marshal(util.live.gate_hops.spec)]) if {
	is_array(util.live.gate_hops.spec)
} else := "the rendered gate list"

without_git_note := "" if {
	util.has_desired
} else := " (Git's list was not read: pass --repo to compare with it)"
