package kai_gitops.rules.gates.nvca_g_014

import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-G-014",
	"title": "KAIScheduler is not disabled while NVCF workloads run on KAI",
	"severity": "warning",
	"scope": "live",
	"rationale": "With -KAIScheduler NVCA sends new NVCF pods to the default scheduler, but pods already assigned to KAI do not fall back to it: they stay KAI's, charged to its queues, and are never scheduled again once KAI is removed or its queues change. Disabling the gate with KAI workloads still running splits the cluster's functions between two schedulers.",
	"remediation": "Remove -KAIScheduler while KAI runs NVCF workloads, or redeploy those functions (so their pods are re-created on the default scheduler) before disabling the gate and removing KAI.",
	"source": "docs/policies.md#feature-gates / NVIDIA/nvcf PR #2008 docs/compute-plane/cluster-management/kai-scheduler.md (enabled unless explicitly disabled with -KAIScheduler; pods assigned to KAI do not automatically fall back to the default scheduler)",
}

# NVCA runs with the gate off: disabled in Git's effective list, or in the list the NVCFBackend last rolled out.
disabled_in_git if data.kai_gitops.lib.util.gate_disabled_in_git("KAIScheduler")

disabled_live if {
	is_array(util.live.gate_hops.status)
	"KAIScheduler" in data.kai_gitops.lib.gates.disabled(util.live.gate_hops.status)
}

on_kai := util.live.nvcf_pods.total - util.live.nvcf_pods.not_on_kai_count

violations contains v if {
	disabled_in_git
	on_kai > 0
	some i, item in object.get(util.gates, "user", [])
	data.kai_gitops.lib.gates.sign(item) == "-"
	data.kai_gitops.lib.gates.name(item) == "KAIScheduler"
	v := violation(util.gates_doc, data.kai_gitops.lib.util.gate_item_path(i), "Git's feature gates disable it")
}

violations contains v if {
	disabled_live
	not disabled_in_git
	on_kai > 0
	v := violation(null, null, "the NVCFBackend's rolled-out feature gates disable it")
}

violation(doc, path, where) := {
	"message": sprintf(
		"NVCA runs with -KAIScheduler (%s) while %d NVCF pod(s) are scheduled by KAI: new pods go to the default scheduler, and pods assigned to KAI do not fall back to it",
		[where, on_kai],
	),
	"subject": null,
	"doc": doc,
	"path": path,
	"fix": null,
}
