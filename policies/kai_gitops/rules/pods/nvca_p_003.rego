package kai_gitops.rules.pods.nvca_p_003

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-P-003",
	"title": "Pending NVCF pods, explained",
	"severity": "warning",
	"scope": "live",
	"rationale": "Pods assigned to KAI do not fall back to the default scheduler; the guide's checks (scheduler name, KAI pods, Unschedulable event) tell which of them holds a pod back.",
	"remediation": "Follow the explanation: restore KAI if its pods are down, otherwise read the pod's Unschedulable event and the KAI scheduler logs (kubectl -n kai-scheduler logs deploy/kai-scheduler-default --tail=100).",
	"source": "docs/policies.md#workload-pods / user guide: Troubleshoot the integration (workload Pods stay Pending)",
}

kai_pods := object.get(util.live, "kai_pods", [])

kai_down if count(kai_pods) == 0

kai_down if {
	some p in kai_pods
	p.ready != true
}

violations contains v if {
	some p in object.get(util.live.nvcf_pods, "pending", [])
	v := {
		"message": sprintf("NVCF pod %s/%s is Pending: %s", [p.namespace, p.name, explain(p)]),
		"subject": data.kai_gitops.lib.util.pod_subject(p.namespace, p.name),
		"doc": null,
		"path": null,
		"fix": sprintf("kubectl -n %s describe pod %s", [p.namespace, p.name]),
	}
}

explain(p) := "it is assigned to kai-scheduler and KAI pods in kai-scheduler are not Ready; pods assigned to KAI do not fall back to the default scheduler, so restore KAI first" if {
	p.scheduler == "kai-scheduler"
	kai_down
} else := sprintf("KAI cannot place it: %s", [json.marshal(object.get(p, "message", ""))]) if {
	p.scheduler == "kai-scheduler"
	object.get(p, "reason", "") == "Unschedulable"
} else := sprintf(
	"it uses scheduler %s, not kai-scheduler, so KAI does not see it (reason %s: %s)",
	[json.marshal(p.scheduler), json.marshal(object.get(p, "reason", "")), json.marshal(object.get(p, "message", ""))],
) if {
	p.scheduler != "kai-scheduler"
} else := sprintf(
	"it is assigned to kai-scheduler and KAI is up but has not placed it yet (reason %s); check the KAI scheduler logs",
	[json.marshal(object.get(p, "reason", ""))],
)
