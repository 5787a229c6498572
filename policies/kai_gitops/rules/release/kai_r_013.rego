package kai_gitops.rules.release.kai_r_013

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-013",
	"title": "The latest KAI release revision is deployed",
	"severity": "warning",
	"scope": "live",
	"rationale": "A failed or pending revision means the last helm install/upgrade did not complete; the cluster may run a mix of old and new KAI objects.",
	"remediation": "Inspect helm history and re-run the upgrade (or roll back) until the latest revision is deployed.",
	"source": "SPEC §5.2",
}

violations contains v if {
	some r in object.get(util.live, "releases", [])
	r.status != "deployed"
	v := {
		"message": sprintf(
			"release %s/%s revision %v is %s, not deployed; the last helm operation did not complete",
			[r.namespace, r.name, r.revision, json.marshal(r.status)],
		),
		"subject": data.kai_gitops.lib.util.release_subject(r.namespace, r.name),
		"doc": null,
		"path": null,
		"fix": sprintf("helm history %s --namespace %s", [r.name, r.namespace]),
	}
}
