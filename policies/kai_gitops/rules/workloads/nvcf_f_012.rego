package kai_gitops.rules.workloads.nvcf_f_012

import data.kai_gitops.lib.workloads

meta := {
	"id": "NVCF-F-012",
	"title": "Pods that name their PodGroup keep it",
	"severity": "warning",
	"scope": "static",
	"rationale": "KAI's pod-grouper overwrites the pod-group-name annotation of every pod with an owner unless the pod or an owner carries kai.scheduler/skip-podgrouper: \"true\" (KAI v0.15.0 and later); a pod-group-name must also name a PodGroup the chart creates, or the pods wait for a group that never comes.",
	"remediation": "Add kai.scheduler/skip-podgrouper: \"true\" next to pod-group-name (KAI v0.15.0+) and create the named PodGroup in the chart, or drop pod-group-name and let the pod-grouper group the pods.",
	"source": "docs/workloads.md#nvcf-f-012-pod-group-name-membership",
}

# Where a pod names its group: [object, annotations, path of the annotations, owned].
members contains [o, ann, path, true] if {
	some o in workloads.objects
	data.kai_gitops.lib.workloads.pod_template_owner(o)
	ann := data.kai_gitops.lib.workloads.template_annotations(o)
	"pod-group-name" in object.keys(ann)
	path := data.kai_gitops.lib.workloads.template_annotations_path(o)
}

members contains [o, ann, ["metadata", "annotations"], false] if {
	some o in workloads.objects
	o.kind == "Pod"
	ann := data.kai_gitops.lib.workloads.annotations(o)
	"pod-group-name" in object.keys(ann)
}

skips(_, ann) if ann["kai.scheduler/skip-podgrouper"] == "true"

skips(o, _) if data.kai_gitops.lib.workloads.annotations(o)["kai.scheduler/skip-podgrouper"] == "true"

violations contains v if {
	some m in members
	m[3] == true
	not data.kai_gitops.rules.workloads.nvcf_f_012.skips(m[0], m[1])
	v := data.kai_gitops.rules.workloads.nvcf_f_012.f012_finding(m, "sets pod-group-name on pods with an owner, which KAI's pod-grouper overwrites; add kai.scheduler/skip-podgrouper: \"true\" to keep it")
}

violations contains v if {
	some m in members
	data.kai_gitops.rules.workloads.nvcf_f_012.skips(m[0], m[1])
	not data.kai_gitops.lib.workloads.feature("skip_podgrouper")
	v := data.kai_gitops.rules.workloads.nvcf_f_012.f012_finding(m, sprintf("relies on kai.scheduler/skip-podgrouper, which the cluster's KAI %v does not read (from v0.15.0)", [object.get(workloads.offer, "kai_version", "")]))
}

violations contains v if {
	some m in members
	name := m[1]["pod-group-name"]
	groups := {g.name | some g in workloads.objects; data.kai_gitops.lib.workloads.is_podgroup(g); g.workload == m[0].workload}
	not name in groups
	v := data.kai_gitops.rules.workloads.nvcf_f_012.f012_finding(m, sprintf("names PodGroup %v, which the chart does not create; add it to the chart", [json.marshal(name)]))
}

f012_finding(m, problem) := {
	"message": sprintf("workload %s: %s %s %s", [m[0].workload, m[0].kind, m[0].name, problem]),
	"subject": data.kai_gitops.lib.workloads.subject(m[0]),
	"doc": m[0].doc,
	"path": array.concat(m[2], ["pod-group-name"]),
	"fix": null,
}
