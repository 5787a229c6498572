package kai_gitops.rules.components.kai_c_001

import data.kai_gitops.lib.util

meta := {
	"id": "KAI-C-001",
	"title": "KAI component pods in kai-scheduler are Ready",
	"severity": "error",
	"scope": "live",
	"rationale": "Pods assigned to KAI never fall back to the default scheduler: while KAI components are down new and replacement NVCF pods stay Pending.",
	"remediation": "Restore KAI availability: inspect the pods and the scheduler logs (kubectl -n kai-scheduler logs deploy/kai-scheduler-default --tail=100).",
	"source": "docs/policies.md#workload-pods / user guide: Verify the integration; Maintain KAI Scheduler",
}

violations contains v if {
	some p in object.get(util.live, "kai_pods", [])
	p.ready != true
	v := {
		"message": sprintf(
			"KAI pod kai-scheduler/%s is not Ready (phase %s); NVCF pods assigned to KAI stay Pending while KAI is down",
			[p.name, json.marshal(object.get(p, "phase", null))],
		),
		"subject": data.kai_gitops.lib.util.pod_subject("kai-scheduler", p.name),
		"doc": null,
		"path": null,
		"fix": sprintf("kubectl -n kai-scheduler describe pod %s", [p.name]),
	}
}

violations contains v if {
	count(object.get(util.live, "kai_pods", [])) == 0
	count(object.get(util.live, "releases", [])) > 0
	v := {
		"message": "a KAI release exists but namespace kai-scheduler has no KAI pods; NVCF pods assigned to KAI stay Pending",
		"subject": null,
		"doc": null,
		"path": null,
		"fix": "kubectl get pods -n kai-scheduler",
	}
}
