package kai_gitops.rules.workloads.nvcf_f_002

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-002",
	"title": "kai.scheduler/topology annotations sit on the workload, not on its pod template",
	"severity": "error",
	"scope": "static",
	"rationale": "KAI's pod-grouper reads kai.scheduler/topology, kai.scheduler/topology-required-placement and kai.scheduler/topology-preferred-placement from the top owner's own annotations only; on spec.template.metadata.annotations they are ignored, and the gang is placed without its topology.",
	"remediation": "Move the annotations from spec.template.metadata.annotations to the workload's own metadata.annotations (the StatefulSet, Job or Deployment).",
	"source": "docs/workloads.md#nvcf-f-002-topology-annotations-on-the-owner",
}

violations contains v if {
	some o in workloads.objects
	data.kai_gitops.lib.workloads.pod_template_owner(o)
	some k in object.keys(data.kai_gitops.lib.workloads.template_annotations(o))
	data.kai_gitops.lib.workloads.topology_key(k)
	not k in object.keys(data.kai_gitops.lib.workloads.annotations(o))
	v := {
		"message": sprintf("workload %s: %s %s carries %s on its pod template, where KAI never reads it; move it to the %s's own metadata.annotations", [o.workload, o.kind, o.name, k, o.kind]),
		"subject": data.kai_gitops.lib.workloads.subject(o),
		"doc": o.doc,
		"path": array.concat(data.kai_gitops.lib.workloads.template_annotations_path(o), [k]),
		"fix": null,
	}
}
