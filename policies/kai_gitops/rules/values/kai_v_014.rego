package kai_gitops.rules.values.kai_v_014

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-V-014",
	"title": "A KAI Config kept in Git is named kai-config",
	"severity": "error",
	"scope": "static",
	"rationale": "The KAI operator acts only on the Config named kai-config; any other is logged as \"Config is not in the singleton name, ignoring it.\" and skipped, so none of its settings apply.",
	"remediation": "Rename the Config to kai-config (metadata.name).",
	"source": "docs/policies.md#how-kai-config-is-produced / KAI-Scheduler pkg/operator/controller/config_controller.go",
}

violations contains v if {
	some m in object.get(util.desired, "kai_manifests", [])
	m.kind == "Config"
	m.name != "kai-config"
	v := {
		"message": sprintf(
			"Config %s is ignored by the KAI operator, which reads only the Config named kai-config; rename it to kai-config",
			[json.marshal(m.name)],
		),
		"subject": {"apiVersion": "kai.scheduler/v1", "kind": "Config", "namespace": null, "name": m.name},
		"doc": m.doc,
		"path": ["metadata", "name"],
		"fix": null,
	}
}
