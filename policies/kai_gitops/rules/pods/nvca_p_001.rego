package kai_gitops.rules.pods.nvca_p_001

import data.kai_gitops.lib.nvca
import data.kai_gitops.lib.util

meta := {
	"id": "NVCA-P-001",
	"title": "NVCF workload pods run on kai-scheduler",
	"severity": "info",
	"scope": "live",
	"rationale": "Pods created before the KAIScheduler gate was enabled keep default-scheduler until their function is redeployed; they are not wrong, just not on KAI yet.",
	"remediation": "Redeploy the function (a new deployment gets kai-scheduler). Never patch pods: spec.schedulerName is immutable and NVCA owns them.",
	"source": "docs/policies.md#workload-pods / user guide: Verify the integration",
}

violations contains v if {
	nvca.kai_gate_on
	some p in object.get(util.live.nvcf_pods, "not_on_kai", [])
	v := {
		"message": sprintf(
			"NVCF pod %s/%s uses scheduler %s and is %s old: it was created before KAIScheduler was enabled; redeploy its function to move it to kai-scheduler",
			[p.namespace, p.name, json.marshal(p.scheduler), data.kai_gitops.lib.util.fmt_age(object.get(p, "age_s", 0))],
		),
		"subject": data.kai_gitops.lib.util.pod_subject(p.namespace, p.name),
		"doc": null,
		"path": null,
		"fix": null,
	}
}
