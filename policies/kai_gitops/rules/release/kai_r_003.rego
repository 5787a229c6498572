package kai_gitops.rules.release.kai_r_003

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-003",
	"title": "The pinned KAI chart keeps kai-config across upgrades",
	"severity": "warning",
	"scope": "static",
	"rationale": "Up to v0.12.21, v0.13.x, v0.14.0-v0.14.5 and v0.15.0-v0.15.2 the chart renders kai-config as a pre-install/pre-upgrade Helm hook without a delete policy: every helm upgrade deletes and re-creates it, the operator re-creates the ServiceAccounts it owns, and the scheduler can stay on 401 Unauthorized for about 48 minutes (KAI-Scheduler #1536, fixed by #1550). The lifecycle is looked up per version, never by comparing versions: v0.12.23 is fixed, v0.13.4 is not. A version outside that table has an unknown lifecycle.",
	"remediation": "Pin a chart version that applies kai-config with the post-install deployer: v0.12.22+, v0.14.6+, v0.15.3, v0.16.x or v0.17.x.",
	"source": "docs/policies.md#how-kai-config-is-produced / KAI-Scheduler deployments/kai-scheduler/templates/kai-config.yaml at each tag, KAI-Scheduler #1536",
}

era := object.get(util.desired, ["kai_chart", "era"], "not given")

violations contains v if {
	era == "E1"
	v := {
		"message": sprintf(
			"KAI chart %s renders kai-config as a pre-upgrade Helm hook: every helm upgrade deletes and re-creates it, and the scheduler may then fail with 401 Unauthorized for ~48 minutes (KAI-Scheduler #1536); pin v0.12.22+, v0.14.6+, v0.15.3, v0.16.x or v0.17.x (not v0.13.x: eras do not follow version order)",
			[util.desired.kai_chart_pin],
		),
		"subject": null,
		"doc": util.config_doc,
		"path": data.kai_gitops.lib.util.config_key_path("kaiChartVersion"),
		"fix": null,
	}
}

violations contains v if {
	era == null
	v := {
		"message": sprintf(
			"kai-gitops does not know how KAI chart %s produces kai-config (known: v0.9.0 to v0.17.1; the v0.20.x tags were retracted), so its kai-config checks may be wrong for it",
			[util.desired.kai_chart_pin],
		),
		"subject": null,
		"doc": util.config_doc,
		"path": data.kai_gitops.lib.util.config_key_path("kaiChartVersion"),
		"fix": null,
	}
}
