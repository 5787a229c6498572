package kai_gitops.rules.modes.kai_m_002

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-M-002",
	"title": "Topology-aware scheduling requires the KAI add-on",
	"severity": "error",
	"scope": "static",
	"rationale": "The stack installs the KAI Topology CRs only when addons.kaiScheduler.enabled is true as well.",
	"remediation": "Set addons.kaiScheduler.enabled: true, or addons.topologyAwareScheduling.enabled: false, in the environment file.",
	"source": "docs/policies.md#install-modes / nvcf-compute-plane stack: environments/base.yaml (addons.topologyAwareScheduling)",
}

violations contains v if {
	data.kai_gitops.lib.util.addon("topologyAwareScheduling")
	not data.kai_gitops.lib.util.addon("kaiScheduler")
	v := {
		"message": "addons.topologyAwareScheduling.enabled is true but addons.kaiScheduler.enabled is not; no KAI Topology is installed. Enable the KAI add-on or turn topology-aware scheduling off",
		"subject": null,
		"doc": util.desired.addons_doc,
		"path": ["addons", "topologyAwareScheduling", "enabled"],
		"fix": null,
	}
}
