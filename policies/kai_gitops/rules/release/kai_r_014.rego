package kai_gitops.rules.release.kai_r_014

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-R-014",
	"title": "The KAI installation's CRDs are complete",
	"severity": "warning",
	"scope": "live",
	"rationale": "Queues without SchedulingShards or PodGroups mean a partial or very old KAI install; topology-aware scheduling needs the Topology CRD.",
	"remediation": "Re-run the KAI install/upgrade at the pinned version so all its CRDs are applied.",
	"source": "docs/configuration.md#what-is-read (CRDs)",
}

crds := object.get(util.live, "crds", {})

required contains "schedulingshards.kai.scheduler"

required contains "podgroups.scheduling.run.ai"

required contains "topologies.kai.scheduler" if data.kai_gitops.lib.util.addon("topologyAwareScheduling")

violations contains v if {
	crds["queues.scheduling.run.ai"] == true
	some name in required
	object.get(crds, name, false) != true
	v := {
		"message": sprintf(
			"CRD %s is missing although KAI Queues are installed; the KAI installation is incomplete. Re-run the install at %s",
			[name, util.kai_version_or_placeholder],
		),
		"subject": data.kai_gitops.lib.util.crd_subject(name),
		"doc": null,
		"path": null,
		"fix": null,
	}
}
