package kai_gitops.rules.release.kai_r_013

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-013",
	"title": "The latest KAI release revision is deployed",
	"severity": "warning",
	"scope": "live",
	"rationale": "A failed or pending newest revision means the last helm install/upgrade/rollback did not complete: the cluster runs an older revision, or a mix of old and new KAI objects. The other release checks read the deployed revision, so only this rule sees the newer failed one.",
	"remediation": "Read helm history for the release, fix the cause, and re-run the upgrade (or roll back) until the newest revision is deployed. A pending-* revision with no helm process running was interrupted: roll back to the last deployed revision.",
	"source": "docs/policies.md#the-kai-release (Helm release Secrets)",
}

violations contains v if {
	some r in object.get(util.live, "releases", [])
	latest := latest_of(r)
	latest.status != "deployed"
	v := {
		"message": sprintf(
			"release %s/%s: %s; %s",
			[r.namespace, r.name, what_happened(latest), what_is_live(r, latest)],
		),
		"subject": data.kai_gitops.lib.util.release_subject(r.namespace, r.name),
		"doc": null,
		"path": null,
		"fix": data.kai_gitops.lib.helm.helm_history_cmd(r.name, r.namespace),
	}
}

# The newest revision whatever its status (FACTS.md: latest_revision/latest_status); facts written before
# those fields existed carry only the chosen revision, which then is the newest one.
latest_of(r) := {"revision": object.get(r, "latest_revision", r.revision), "status": object.get(r, "latest_status", r.status)}

what_happened(latest) := sprintf("%s failed", [helm_operation(latest.revision)]) if latest.status == "failed"

what_happened(latest) := sprintf(
	"revision %v is %s: a helm operation is still running or was interrupted",
	[latest.revision, latest.status],
) if helm_pending_status(latest.status)

what_happened(latest) := sprintf("the newest revision %v is %s, not deployed", [latest.revision, json.marshal(latest.status)]) if {
	latest.status != "failed"
	not helm_pending_status(latest.status)
}

helm_pending_status(status) if {
	is_string(status)
	startswith(status, "pending-")
}

helm_operation(revision) := "install (revision 1)" if revision == 1

helm_operation(revision) := sprintf("upgrade to revision %v", [revision]) if revision != 1

# `revision`/`status` are the chosen revision: the newest deployed one when there is one.
what_is_live(r, latest) := sprintf("revision %v is live", [r.revision]) if {
	r.status == "deployed"
	r.revision != latest.revision
} else := "no revision is deployed"
