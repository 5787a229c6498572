package kai_gitops.rules.health.nvca_h_002

import data.kai_gitops.lib.nvca
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-H-002",
	"title": "NVCA's kai-scheduler-queues check passes (predicted from live Queues)",
	"severity": "error",
	"scope": "live",
	"rationale": "NVCA checks the two default queues and marks the agent unhealthy on the first problem; the message is NVCA's own, predicted byte for byte so it can be grepped in NVCA's health output.",
	"remediation": "Either one or both were not found: create default-parent-queue and default-queue (child of the parent) with unlimited resources. Queue hierarchy misconfigured: default-queue's parentQueue must be default-parent-queue, which has no parent. Resource violation: set quota -1, limit -1, overQuotaWeight 1 for cpu, gpu and memory on the queue. helm upgrade does not change existing queues: patch them.",
	"source": "docs/policies.md#nvca-health-check / user guide: Troubleshoot the integration (error table)",
}

# Python may have no prediction to offer (null); treat it as no verdict rather than failing the evaluation.
prediction := p if {
	p := util.live.nvca_prediction
	is_object(p)
} else := {}

violations contains v if {
	object.get(prediction, "status", null) != "not-evaluated" # the gate is off: NVCA does not run the check
	some err in object.get(prediction, "errors", [])
	not skipped(err)
	v := {
		"message": err,
		"subject": verdict_subject(err),
		"doc": null,
		"path": null,
		"fix": verdict_fix(err),
	}
}

skipped(err) if {
	err == nvca.not_installed
	nvca.not_installed_reported
}

queue_in(err) := "default-parent-queue" if contains(err, "for queue default-parent-queue:")

queue_in(err) := "default-queue" if contains(err, "for queue default-queue:")

verdict_subject(err) := data.kai_gitops.lib.util.queue_subject(q) if q := queue_in(err)

verdict_subject(err) := data.kai_gitops.lib.util.queue_subject("default-queue") if {
	not queue_in(err)
	startswith(err, "Queue hierarchy misconfigured")
}

verdict_subject(err) := null if {
	not queue_in(err)
	not startswith(err, "Queue hierarchy misconfigured")
}

verdict_fix(err) := data.kai_gitops.lib.util.patch_queue_resources_cmd(q) if q := queue_in(err)

verdict_fix(err) := hierarchy_fix if {
	not queue_in(err)
	startswith(err, "Queue hierarchy misconfigured")
}

verdict_fix(err) := create_fix if contains(err, "either one or both were not found")

verdict_fix(err) := null if {
	not queue_in(err)
	not startswith(err, "Queue hierarchy misconfigured")
	not contains(err, "either one or both were not found")
}

parent_has_parent if {
	some q in util.live.queues
	q.name == "default-parent-queue"
	object.get(q, "parent", null) != null
	q.parent != ""
}

hierarchy_fix := "kubectl patch queues.scheduling.run.ai default-parent-queue --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/parentQueue\"}]'" if {
	parent_has_parent
} else := "kubectl patch queues.scheduling.run.ai default-queue --type merge -p '{\"spec\":{\"parentQueue\":\"default-parent-queue\"}}'"

default_queues := {
	"apiVersion": "v1",
	"kind": "List",
	"items": [
		{
			"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
			"metadata": {"name": "default-parent-queue", "annotations": {"helm.sh/resource-policy": "keep"}},
			"spec": {"resources": util.unlimited_resources},
		},
		{
			"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
			"metadata": {"name": "default-queue", "annotations": {"helm.sh/resource-policy": "keep"}},
			"spec": {"parentQueue": "default-parent-queue", "resources": util.unlimited_resources},
		},
	],
}

# `kubectl create` never overwrites: an existing queue of the pair is left alone (and reported).
create_fix := sprintf("echo '%s' | kubectl create -f -", [json.marshal(default_queues)])
