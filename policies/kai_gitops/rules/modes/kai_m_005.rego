package kai_gitops.rules.modes.kai_m_005

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-M-005",
	"title": "An add-on cluster enables the KAI add-on",
	"severity": "error",
	"scope": "static",
	"rationale": "In add-on mode the nvcf-compute-plane stack is what installs KAI, and it does so only with addons.kaiScheduler.enabled: true; a misspelt or missing switch (addons.kaiSchedular) installs no KAI and every check of the cluster's KAI passes vacuously.",
	"remediation": "Set addons.kaiScheduler.enabled: true in the environment file, or declare the cluster as mode: standalone with its KAI values file.",
	"source": "docs/policies.md#install-modes / nvcf-compute-plane environments/base.yaml (addons.kaiScheduler)",
}

violations contains v if {
	util.desired.mode == "addon"
	not data.kai_gitops.lib.util.addon("kaiScheduler")
	v := {
		"message": sprintf(
			"the cluster is in add-on mode but %s does not enable addons.kaiScheduler, so the compute-plane stack installs no KAI; set addons.kaiScheduler.enabled: true",
			[object.get(util.desired.docs, "env", "the environment file")],
		),
		"subject": null,
		"doc": util.desired.addons_doc,
		"path": ["addons", "kaiScheduler", "enabled"],
		"fix": null,
	}
}
