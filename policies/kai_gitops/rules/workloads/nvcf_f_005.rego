package kai_gitops.rules.workloads.nvcf_f_005

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-005",
	"title": "A StatefulSet gang starts its pods in parallel",
	"severity": "warning",
	"scope": "static",
	"rationale": "A StatefulSet with the default podManagementPolicy (OrderedReady) creates pod N+1 only when pod N is Ready, so KAI never sees the gang's members together and a gang that needs all of them waits forever. The NVCF gang pattern is a StatefulSet with podManagementPolicy: Parallel. (KAI's generated PodGroup for a StatefulSet has minMember 1; a required topology level still keeps its pods in one domain.)",
	"remediation": "Set spec.podManagementPolicy: Parallel on the StatefulSet.",
	"source": "docs/workloads.md#nvcf-f-005-statefulset-gang-without-parallel",
}

violations contains v if {
	some o in workloads.objects
	o.kind == "StatefulSet"
	data.kai_gitops.lib.workloads.group(o) == "apps"
	data.kai_gitops.lib.workloads.replicas(o) > 1
	data.kai_gitops.lib.workloads.asks_gang(o)
	object.get(o, ["spec", "podManagementPolicy"], "OrderedReady") != "Parallel"
	v := {
		"message": sprintf("workload %s: StatefulSet %s is a gang of %v pods but its podManagementPolicy is %v, so its pods start one after another; set spec.podManagementPolicy: Parallel", [o.workload, o.name, data.kai_gitops.lib.workloads.replicas(o), object.get(o, ["spec", "podManagementPolicy"], "OrderedReady (the default)")]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": ["spec", "podManagementPolicy"],
		"fix": null,
	}
}
