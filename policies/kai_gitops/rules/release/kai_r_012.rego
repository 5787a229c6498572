package kai_gitops.rules.release.kai_r_012

import data.kai_gitops.lib.helm
import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-012",
	"title": "The KAI release runs the pinned chart version",
	"severity": "error",
	"scope": "live",
	"rationale": "Only the pinned chart version is tested with this NVCA and compute plane; chart defaults and values keys change between versions.",
	"remediation": "Upgrade the release to the pinned version (add-on mode: apply the environment; standalone: helm upgrade --version <pin>). helm upgrade does not change existing default queues.",
	"source": "docs/policies.md#the-kai-release / user guide: Maintain KAI Scheduler",
}

violations contains v if {
	want := util.expected_kai_version
	some r in object.get(util.live, "releases", [])
	r.name == "kai-scheduler"
	r.namespace == "kai-scheduler"
	r.chart_version != want
	v := {
		"message": sprintf(
			"release kai-scheduler runs chart %s but Git pins %s; upgrade the release to %s",
			[r.chart_version, want, want],
		),
		"subject": data.kai_gitops.lib.util.release_subject(r.namespace, r.name),
		"doc": null,
		"path": null,
		"fix": helm.upgrade_kai_cmd,
	}
}
