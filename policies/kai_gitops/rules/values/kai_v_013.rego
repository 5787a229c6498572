package kai_gitops.rules.values.kai_v_013

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-013",
	"title": "A SchedulingShard exists for the scheduler",
	"severity": "error",
	"scope": "static",
	"rationale": "The operator deploys the scheduler only per SchedulingShard. With defaultShard.enabled: false (v0.16+) the chart renders none, so unless one is kept in Git no scheduler runs and every pod for kai-scheduler stays Pending.",
	"remediation": "Set defaultShard.enabled: true, or keep the SchedulingShard manifest you apply yourself in a file listed under kaiManifestFiles.",
	"source": "docs/policies.md#how-kai-config-is-produced / KAI-Scheduler v0.16.8 deployments/kai-scheduler/templates/default-shard.yaml",
}

violations contains v if {
	doc := util.desired.kai_values_doc
	is_string(doc)
	"defaultShard" in object.get(util.desired, ["kai_chart", "sections"], [])
	object.get(util.desired.kai_values_effective, ["defaultShard", "enabled"], true) == false
	count([m | some m in object.get(util.desired, "kai_manifests", []); m.kind == "SchedulingShard"]) == 0
	v := {
		"message": "defaultShard.enabled is false and no SchedulingShard is kept in Git (kaiManifestFiles): no scheduler will run and pods for kai-scheduler stay Pending; set defaultShard.enabled: true",
		"subject": null,
		"doc": doc,
		"path": ["defaultShard", "enabled"],
		"fix": null,
	}
}
