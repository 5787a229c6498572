package kai_gitops.rules.workloads.nvcf_f_004

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-004",
	"title": "A Deployment is not used as a gang",
	"severity": "warning",
	"scope": "static",
	"rationale": "KAI's pod-grouper gives a Deployment one PodGroup per pod (minMember 1): its replicas are scheduled one by one and never as a gang, and a topology request applies to each pod alone. The NVCF guide: use a StatefulSet when all replicas must be scheduled as one gang.",
	"remediation": "Use a StatefulSet with podManagementPolicy: Parallel and the topology annotations on its own metadata, or a Grove PodCliqueSet.",
	"source": "docs/workloads.md#nvcf-f-004-deployment-as-gang",
}

violations contains v if {
	some o in workloads.objects
	o.kind == "Deployment"
	data.kai_gitops.lib.workloads.group(o) == "apps"
	data.kai_gitops.lib.workloads.replicas(o) > 1
	data.kai_gitops.lib.workloads.asks_gang(o)
	v := {
		"message": sprintf("workload %s: Deployment %s has %v replicas and asks for gang or topology placement, but KAI makes one PodGroup per Deployment pod, so they are never scheduled together; use a StatefulSet with podManagementPolicy: Parallel", [o.workload, o.name, data.kai_gitops.lib.workloads.replicas(o)]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": ["kind"],
		"fix": null,
	}
}
