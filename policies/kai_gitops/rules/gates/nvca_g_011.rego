package kai_gitops.rules.gates.nvca_g_011

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-011",
	"title": "NVCFBackend spec feature gates equal the ConfigMap (minus DynamicGPUDiscovery)",
	"severity": "error",
	"scope": "live",
	"rationale": "The NVCA operator copies the ConfigMap's capabilities into NVCFBackend spec.featureGate.values, dropping DynamicGPUDiscovery by design; any other difference means the operator has not reconciled.",
	"remediation": "Check the nvca-operator pod in nvca-operator is running and its logs; it reconciles the NVCFBackend from the ConfigMap.",
	"source": "docs/policies.md#feature-gates (ConfigMap → NVCFBackend spec, minus DynamicGPUDiscovery)",
}

violations contains v if {
	cm := util.live.gate_hops.configmap
	spec := util.live.gate_hops.spec
	is_array(cm)
	is_array(spec)
	want := data.kai_gitops.lib.gates.without_dropped(cm)
	got := data.kai_gitops.lib.gates.without_dropped(spec)
	want != got
	v := {
		"message": sprintf(
			"NVCFBackend spec.featureGate.values differ from the ConfigMap capabilities, ignoring DynamicGPUDiscovery (%s); the NVCA operator has not reconciled",
			[data.kai_gitops.lib.gates.fmt_diff(want, got, "ConfigMap", "spec")],
		),
		"subject": util.live_backend,
		"doc": null,
		"path": null,
		"fix": "kubectl -n nvca-operator logs deploy/nvca-operator --tail=100",
	}
}
