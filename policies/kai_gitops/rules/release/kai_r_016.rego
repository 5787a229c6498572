package kai_gitops.rules.release.kai_r_016

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-016",
	"title": "KAI Helm releases outside kai-scheduler were checked",
	"severity": "info",
	"scope": "live",
	"rationale": "KAI-R-010 (exactly one KAI release) and KAI-R-011 (named kai-scheduler in kai-scheduler) can only judge the release Secrets the tool may list. With least-privilege RBAC (deploy/'s default) that is namespace kai-scheduler only, so a second KAI release in another namespace is not seen: these rules then passed on partial knowledge, and this says so instead of failing the run.",
	"remediation": "Accept it (least privilege), or let the tool list Helm release Secrets in every namespace: add the component deploy/components/cluster-wide-releases to your kustomization. An operator with cluster-wide rights can check by hand with the command shown.",
	"source": "docs/policies.md#the-kai-release / docs/deployment.md#rbac-least-privilege",
}

search := object.get(util.live, "release_search", {"all_namespaces": true})

violations contains v if {
	search.all_namespaces == false
	v := {
		"message": sprintf(
			"KAI Helm releases were searched only in namespace(s) %s (%s); a KAI release under another name in another namespace is not checked by KAI-R-010/KAI-R-011",
			[concat(", ", object.get(search, "namespaces", [])), object.get(search, "reason", "")],
		),
		"subject": null,
		"doc": null,
		"path": null,
		"fix": data.kai_gitops.lib.helm.list_kai_releases_cmd,
	}
}
