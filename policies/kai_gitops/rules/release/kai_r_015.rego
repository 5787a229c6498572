package kai_gitops.rules.release.kai_r_015

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-015",
	"title": "Every KAI Helm release Secret can be decoded",
	"severity": "warning",
	"scope": "live",
	"rationale": "A helm.sh/release.v1 Secret that cannot be decoded is a revision nobody can read: the release checks (KAI-R-010 to KAI-R-013) and the values drift check do not see it, and Helm itself may fail on the release.",
	"remediation": "Inspect the release with helm history <release> --namespace <namespace> (Helm reads the same Secrets). Never print the Secret (kubectl get secret -o yaml/json, describe, or decoding data.release): it holds the release's values, which may include credentials.",
	"source": "docs/policies.md#the-kai-release (Helm release Secrets)",
}

errors := object.get(util.live, "release_errors", [])

violations contains v if {
	is_array(errors)
	some e in errors
	is_string(e)
	secret := parse_error(e)
	v := {
		"message": sprintf(
			"Helm release Secret %s could not be decoded (%s); the release checks do not see this revision. Inspect it with %s and never print the Secret: it holds the release's values",
			[secret.shown, secret.reason, secret.fix],
		),
		"subject": secret.subject,
		"doc": null,
		"path": null,
		"fix": secret.fix,
	}
}

# "Secret/<namespace>/<name>: <reason>" (FACTS.md); anything else is reported as it came.
parse_error(e) := parsed if {
	pieces := split(e, ": ")
	count(pieces) > 1
	ref := split(pieces[0], "/")
	count(ref) == 3
	ref[0] == "Secret"
	parsed := {
		"shown": sprintf("%s/%s", [ref[1], ref[2]]),
		"reason": concat(": ", array.slice(pieces, 1, count(pieces))),
		"subject": data.kai_gitops.lib.util.secret_subject(ref[1], ref[2]),
		"fix": history_fix(ref[1], ref[2]),
	}
} else := {"shown": "(unnamed)", "reason": e, "subject": null, "fix": data.kai_gitops.lib.helm.list_kai_releases_cmd}

# Helm names the Secret sh.helm.release.v1.<release>.v<revision>; release names may contain dots.
history_fix(ns, secret) := data.kai_gitops.lib.helm.helm_history_cmd(release, ns) if {
	startswith(secret, "sh.helm.release.v1.")
	parts := split(trim_prefix(secret, "sh.helm.release.v1."), ".")
	count(parts) > 1
	startswith(parts[count(parts) - 1], "v")
	release := concat(".", array.slice(parts, 0, count(parts) - 1))
} else := data.kai_gitops.lib.helm.list_kai_releases_cmd
