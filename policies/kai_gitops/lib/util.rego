# Helpers shared by the shipped rules. Not a rule package: it has no meta/violations.
package kai_gitops.lib.util

desired := object.get(input, "desired", {})

# doctor on a snapshot has no Git side: rules comparing with Git's intent stay silent then.
has_desired if is_object(input.desired)

# Live facts exist only in a live evaluation; rules must never read `live` in a static one, because
# `not live.x` would be true for every absent fact.
live := input.live if input.scope == "live"

addons := object.get(desired, "addons", {})

addon(name) if addons[name] == true

# KAI is installed by something this repo declares: the stack add-on or a standalone values file.
kai_from_git if addon("kaiScheduler")

kai_from_git if desired.standalone_kai == true

gates := object.get(desired, "gates", {})

gate_enabled_in_git(name) if name in object.get(gates, "enabled", [])

gate_disabled_in_git(name) if name in object.get(gates, "disabled", [])

gates_doc := object.get(gates, "doc", null)

gates_path := object.get(gates, "path", null)

# Path of the user's gate list item at index i, or the list itself when there is no item.
gate_item_path(i) := array.concat(gates_path, [i]) if gates_path != null

gate_item_path(_) := null if gates_path == null

# The repo config document, for findings about it (null when the facts come without one).
config_doc := "config" if desired.docs.config

config_doc := null if not desired.docs.config

# Path of `key` in this cluster's entry of the repo config, so a finding about the entry names the key's line.
# (object.get, not `desired.config_entry`: OPA evaluates the reference before `not`, so a fact that is absent
# would leave the function undefined there, where regorus returns null.)
config_key_path(key) := array.concat(entry, [key]) if {
	entry := object.get(desired, "config_entry", null)
	is_array(entry)
}

config_key_path(_) := null if not is_array(object.get(desired, "config_entry", null))

# Which chart version the cluster should run: the repo pin, else the version the stack pins.
expected_kai_version := desired.kai_chart_pin if is_string(desired.kai_chart_pin)

expected_kai_version := desired.stack_kai_version if {
	not is_string(desired.kai_chart_pin)
	is_string(desired.stack_kai_version)
}

# Whose defaults an unset value takes, named by the pin the reader wrote: when kai-gitops ships no values file
# for that exact version, the nearest modelled chart's stand in, and the text says so.
chart_defaults := sprintf("chart %s defaults", [desired.defaults_version]) if {
	desired.defaults_version == expected_kai_version
} else := sprintf("chart %s defaults (as in %s, the nearest chart kai-gitops models)", [expected_kai_version, desired.defaults_version]) if {
	is_string(expected_kai_version)
} else := sprintf("chart %s defaults", [desired.defaults_version])

kai_version_or_placeholder := v if {
	v := expected_kai_version
} else := "<kai-version>"

resource_kinds := ["cpu", "gpu", "memory"]

# Whether a queue is unlimited or capped is decided once, in data.kai_gitops.lib.queues (limited_kinds,
# capped_kinds); do not compare queue numbers anywhere else.

fmt_triple(t) := sprintf("quota=%v, limit=%v, overQuotaWeight=%v", [t.quota, t.limit, t.overQuotaWeight])

unlimited_resources := {k: {"quota": -1, "limit": -1, "overQuotaWeight": 1} | some k in resource_kinds}

queue_subject(name) := {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "namespace": null, "name": name}

node_subject(name) := {"apiVersion": "v1", "kind": "Node", "namespace": null, "name": name}

pod_subject(ns, name) := {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name}

backend_subject(ns, name) := {"apiVersion": "nvcf.nvidia.io/v1", "kind": "NVCFBackend", "namespace": ns, "name": name}

# The NVCFBackend, when there is exactly one to name.
live_backend := subject if {
	b := live.backend
	is_string(b.name)
	is_string(b.namespace)
	subject := backend_subject(b.namespace, b.name)
} else := null

# Exactly the subject the Python differ gives the KAI release, so one waiver matches both kinds of finding.
release_subject(ns, name) := {"apiVersion": "helm.sh/v3", "kind": "HelmRelease", "namespace": ns, "name": name}

secret_subject(ns, name) := {"apiVersion": "v1", "kind": "Secret", "namespace": ns, "name": name}

crd_subject(name) := {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "namespace": null, "name": name}

configmap_subject(ns, name) := {"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": name}

patch_queue_resources_cmd(name) := sprintf(
	"kubectl patch queues.scheduling.run.ai %s --type merge -p '%s'",
	[name, json.marshal({"spec": {"resources": unlimited_resources}})],
)

# Human-readable age for pods; NVCA-created pods live for days, so days+hours is precise enough.
fmt_age(seconds) := sprintf("%dd%dh", [d, h]) if {
	d := floor(seconds / 86400)
	d > 0
	h := floor((seconds - (d * 86400)) / 3600)
} else := sprintf("%dh%dm", [h, m]) if {
	h := floor(seconds / 3600)
	h > 0
	m := floor((seconds - (h * 3600)) / 60)
} else := sprintf("%dm", [floor(seconds / 60)])

shared := object.get(desired, "shared_cluster", {})

shared_intent := object.get(shared, "intent", "dedicated")

intended_nodes := {n | some n in object.get(shared, "nodes", [])}

has_selector if {
	s := object.get(shared, "selector", null)
	is_object(s)
	count(s) > 0
}

# The nodes the operator means for NVCF: listed names, plus selector matches when Python resolved them.
intended_known if count(intended_nodes) > 0

intended_known if is_array(live.nodes.selector_matches)

intended_set := intended_nodes | matches if {
	matches := {n | some n in live.nodes.selector_matches}
} else := intended_nodes

schedule_label := "nvca.nvcf.nvidia.io/schedule"
