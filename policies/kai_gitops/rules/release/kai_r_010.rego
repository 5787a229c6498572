package kai_gitops.rules.release.kai_r_010

import data.kai_gitops.lib.helm
import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-010",
	"title": "Exactly one KAI Helm release exists",
	"severity": "error",
	"scope": "live",
	"rationale": "A second KAI release must not exist (two schedulers fight over the same pods and CRDs); none while Git installs KAI means the install never happened or was removed.",
	"remediation": "Keep only release kai-scheduler in namespace kai-scheduler (helm uninstall the others after checking their queues), or install KAI as Git declares.",
	"source": "docs/policies.md#the-kai-release / user guide: Do not install a second KAI release",
}

releases := object.get(util.live, "releases", [])

violations contains v if {
	count(releases) > 1
	v := {
		"message": sprintf(
			"found %d KAI releases (%s); exactly one, kai-scheduler in namespace kai-scheduler, must exist",
			[count(releases), concat(", ", sort([sprintf("%s/%s %s", [r.namespace, r.name, r.chart_version]) | some r in releases]))],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": helm.list_kai_releases_cmd,
	}
}

violations contains v if {
	count(releases) == 0
	util.kai_from_git
	v := {
		"message": "Git installs KAI but no KAI Helm release exists in the cluster; apply the environment (add-on mode) or helm install kai-scheduler (standalone)",
		"subject": data.kai_gitops.lib.util.release_subject("kai-scheduler", "kai-scheduler"),
		"doc": null,
		"path": null,
		"fix": helm.install_kai_cmd,
	}
}
