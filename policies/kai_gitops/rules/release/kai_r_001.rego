package kai_gitops.rules.release.kai_r_001

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-001",
	"title": "Standalone KAI chart version is pinned",
	"severity": "warning",
	"scope": "static",
	"rationale": "Without a pin, helm install/upgrade takes whatever chart is latest, and the chart defaults (queue quotas, values keys) change between versions.",
	"remediation": "Pin the KAI chart version in the repo config to the version the compute plane stack tests (deploy/stacks/nvcf-compute-plane/helmfile.d/01-dependencies.yaml.gotmpl of your release tag) and pass it to helm with --version.",
	"source": "SPEC §4.4 / seed: Install KAI Scheduler (--version <kai-version>)",
}

violations contains v if {
	util.desired.standalone_kai == true
	not is_string(util.desired.kai_chart_pin)
	v := {
		"message": "the standalone KAI install has no chart version pin; set one in the repo config (e.g. the stack's KAI version) so helm install/upgrade use a tested chart",
		"subject": null,
		"doc": config_doc,
		"path": null,
		"fix": null,
	}
}

config_doc := "config" if util.desired.docs.config

config_doc := null if not util.desired.docs.config
