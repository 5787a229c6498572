package kai_gitops.rules.gates.nvca_g_012

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-012",
	"title": "NVCFBackend feature-gate rollout is complete (status equals spec or overrides)",
	"severity": "warning",
	"scope": "live",
	"rationale": "status.featureGate.values is the list NVCA last rolled out; until it equals the spec (or the overrides, which replace the spec list) the agent still runs with the old gates.",
	"remediation": "Wait for the rollout; if it does not finish, check the nvca pods in nvca-system and the nvca-operator logs.",
	"source": "docs/policies.md#feature-gates (spec+overrides → status = rollout pending)",
}

hops := util.live.gate_hops

# Overrides replace the spec list wholesale, so they are what the rollout aims at when present.
target := hops.overrides if is_array(hops.overrides)

target := hops.spec if {
	not is_array(hops.overrides)
	is_array(hops.spec)
}

target_name := "spec.overrides.featureGate.values" if is_array(hops.overrides)

target_name := "spec.featureGate.values" if not is_array(hops.overrides)

violations contains v if {
	is_array(target)
	is_array(hops.status)
	want := data.kai_gitops.lib.gates.without_dropped(target)
	got := data.kai_gitops.lib.gates.without_dropped(hops.status)
	want != got
	v := {
		"message": sprintf(
			"feature-gate rollout pending: NVCFBackend status.featureGate.values differ from %s (%s)",
			[target_name, data.kai_gitops.lib.gates.fmt_diff(want, got, target_name, "status")],
		),
		"subject": util.live_backend,
		"doc": null,
		"path": null,
		"fix": "kubectl get nvcfbackends.nvcf.nvidia.io -A -o yaml",
	}
}

violations contains v if {
	is_array(target)
	not is_array(hops.status)
	v := {
		"message": sprintf("feature-gate rollout pending: NVCFBackend has no status.featureGate.values yet (%s is set)", [target_name]),
		"subject": util.live_backend,
		"doc": null,
		"path": null,
		"fix": "kubectl get nvcfbackends.nvcf.nvidia.io -A -o yaml",
	}
}
