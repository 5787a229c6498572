package kai_gitops.rules.release.kai_r_011

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-011",
	"title": "The KAI release is kai-scheduler in namespace kai-scheduler",
	"severity": "error",
	"scope": "live",
	"rationale": "The add-on manages only release kai-scheduler in namespace kai-scheduler; a KAI installation under another name or namespace is not adopted and would end up beside a second one.",
	"remediation": "Remove the KAI release with the other name or namespace and install it as kai-scheduler in namespace kai-scheduler (the default queues are kept by helm.sh/resource-policy: keep).",
	"source": "docs/policies.md#the-kai-release / user guide: Install KAI Scheduler (A KAI installation under another release name or namespace is not adopted)",
}

violations contains v if {
	some r in object.get(util.live, "releases", [])
	not canonical_release(r)
	v := {
		"message": sprintf(
			"KAI is installed as release %s in namespace %s; it must be release kai-scheduler in namespace kai-scheduler, otherwise the add-on does not adopt it",
			[r.name, r.namespace],
		),
		"subject": data.kai_gitops.lib.util.release_subject(r.namespace, r.name),
		"doc": null,
		"path": null,
		"fix": data.kai_gitops.lib.helm.helm_uninstall_cmd(r.name, r.namespace),
	}
}

canonical_release(r) if {
	r.name == "kai-scheduler"
	r.namespace == "kai-scheduler"
}
