package kai_gitops.tests.gates

import data.kai_gitops.rules.gates
import data.kai_gitops.testdata

sa := testdata.standalone_static

sa_gates(user, enabled, disabled) := data.kai_gitops.testdata.with_gates(sa, user, enabled, disabled)

# NVCA-G-001
test_g001_gate_on_passes if {
	count(gates.nvca_g_001.violations) == 0 with input as sa
}

test_g001_forgotten_gate_fails if {
	facts := sa_gates(["SelfHosted"], ["SelfHosted"], [])
	some v in gates.nvca_g_001.violations with input as facts
	v.doc == "nvca_values"
	v.path == ["selfManaged", "featureGateValues"]
}

test_g001_silent_when_git_has_no_gate_list if {
	facts := object.union(sa, {"desired": {"gates": {"doc": null, "path": [], "user": [], "effective": [], "enabled": [], "disabled": []}}})
	count(gates.nvca_g_001.violations) == 0 with input as facts
}

# NVCA-G-002
test_g002_no_explicit_disable_passes if {
	count(gates.nvca_g_002.violations) == 0 with input as sa
}

test_g002_explicit_disable_warns if {
	facts := sa_gates(["SelfHosted", "-KAIScheduler"], ["SelfHosted"], ["KAIScheduler"])
	some v in gates.nvca_g_002.violations with input as facts
	v.path == ["selfManaged", "featureGateValues", 1]
	count(gates.nvca_g_001.violations) == 0 with input as facts
}

# NVCA-G-003
test_g003_gate_with_kai_passes if {
	count(gates.nvca_g_003.violations) == 0 with input as sa
}

test_g003_gate_without_kai_warns if {
	facts := object.union(sa, {"desired": {"standalone_kai": false}})
	some v in gates.nvca_g_003.violations with input as facts
	contains(v.message, "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled")
}

# NVCA-G-004
test_g004_known_gates_pass if {
	count(gates.nvca_g_004.violations) == 0 with input as sa
}

test_g004_unknown_gate_warns if {
	facts := sa_gates(["KAIScheduler", "+GPUSharing"], ["GPUSharing", "KAIScheduler"], [])
	some v in gates.nvca_g_004.violations with input as facts
	startswith(v.message, "feature gate \"+GPUSharing\" is not a gate NVCA knows")
	v.path == ["selfManaged", "featureGateValues", 1]
}

test_g004_typo_is_not_unknown if {
	facts := sa_gates(["kaischeduler"], ["kaischeduler"], [])
	count(gates.nvca_g_004.violations) == 0 with input as facts
}

# Python strips surrounding spaces, then exactly ONE sign: "--X" disables the gate named "-X".
test_g004_double_minus_is_an_unknown_gate if {
	facts := sa_gates(["SelfHosted", "KAIScheduler", "--KAIScheduler"], ["KAIScheduler", "SelfHosted"], ["-KAIScheduler"])
	vs := [v | some v in gates.nvca_g_004.violations with input as facts]
	count(vs) == 1
	startswith(vs[0].message, "feature gate \"--KAIScheduler\" is not a gate NVCA knows; NVCA ignores it (only one leading sign is stripped, so this names the gate \"-KAIScheduler\")")
	vs[0].path == ["selfManaged", "featureGateValues", 2]
	count(gates.nvca_g_002.violations) == 0 with input as facts
	count(gates.nvca_g_005.violations) == 0 with input as facts
	count(gates.nvca_g_007.violations) == 0 with input as facts
}

test_g004_plus_minus_is_an_unknown_gate if {
	facts := sa_gates(["SelfHosted", "KAIScheduler", "+-LogPosting"], ["-LogPosting", "KAIScheduler", "SelfHosted"], [])
	some v in gates.nvca_g_004.violations with input as facts
	contains(v.message, "this names the gate \"-LogPosting\"")
}

test_g004_surrounding_spaces_are_stripped if {
	facts := sa_gates([" SelfHosted ", "KAIScheduler", " -LogPosting "], ["KAIScheduler", "SelfHosted"], ["LogPosting"])
	count(gates.nvca_g_004.violations) == 0 with input as facts
	count(gates.nvca_g_005.violations) == 0 with input as facts
}

test_gate_items_parse_like_python if {
	data.kai_gitops.lib.gates.name("--X") == "-X"
	data.kai_gitops.lib.gates.sign("--X") == "-"
	data.kai_gitops.lib.gates.name("+-X") == "-X"
	data.kai_gitops.lib.gates.sign("+-X") == "+"
	data.kai_gitops.lib.gates.name("++X") == "+X"
	data.kai_gitops.lib.gates.name(" X ") == "X"
	data.kai_gitops.lib.gates.sign(" X ") == "+"
	data.kai_gitops.lib.gates.name(" -X ") == "X"
	data.kai_gitops.lib.gates.sign(" -X ") == "-"
	data.kai_gitops.lib.gates.enabled([" X ", "+Y", "--Z"]) == {"X", "Y"}
	data.kai_gitops.lib.gates.disabled([" X ", "+Y", "--Z"]) == {"-Z"}
	data.kai_gitops.lib.gates.signed([" +X", " -Y "]) == {"X", "-Y"}
}

# NVCA-G-005
test_g005_correct_case_passes if {
	count(gates.nvca_g_005.violations) == 0 with input as sa
}

test_g005_wrong_case_fails_with_spelling if {
	facts := sa_gates(["SelfHosted", "kaischeduler", "-dynamicgpudiscovery"], ["SelfHosted", "kaischeduler"], ["dynamicgpudiscovery"])
	msgs := {v.message | some v in gates.nvca_g_005.violations with input as facts}
	msgs == {"feature gate \"kaischeduler\" is a typo of \"KAIScheduler\" (names are case-sensitive; NVCA ignores it, so NVCA runs without KAIScheduler); write \"KAIScheduler\""}
}

# The same slip judged by what NVCA then runs: the disabling typo of a gate that is off anyway is a warning.
test_g004_a_typo_that_changes_nothing_warns if {
	facts := sa_gates(["SelfHosted", "kaischeduler", "-dynamicgpudiscovery"], ["SelfHosted", "kaischeduler"], ["dynamicgpudiscovery"])
	msgs := {v.message | some v in gates.nvca_g_004.violations with input as facts}
	msgs == {"feature gate \"-dynamicgpudiscovery\" is not a gate NVCA knows (a typo of \"DynamicGPUDiscovery\": names are case-sensitive), so NVCA ignores it; it does no harm, as NVCA runs without DynamicGPUDiscovery, but write \"-DynamicGPUDiscovery\" or drop it"}
}

# Add-on mode: the stack appends KAIScheduler unless the list names it exactly, so a misspelt KAIScheduler
# leaves NVCA with the gate on (a warning), and a misspelt -KAIScheduler cannot turn it off (an error).
addon_typo(item, enabled, disabled) := object.union(testdata.addon_static, {"desired": {"gates": {
	"user": ["SelfHosted", item], "effective": array.concat(["SelfHosted", item], testdata.addon_gates),
	"enabled": enabled, "disabled": disabled,
}}})

test_g004_addon_misspelt_kaischeduler_warns_as_the_stack_appends_it if {
	facts := addon_typo("KaiScheduler", sort(array.concat(["KaiScheduler", "SelfHosted"], testdata.addon_gates)), [])
	count(gates.nvca_g_005.violations) == 0 with input as facts
	some v in gates.nvca_g_004.violations with input as facts
	contains(v.message, "it does no harm, as NVCA runs with KAIScheduler on (the add-on stack appends it itself")
}

test_g005_addon_misspelt_minus_kaischeduler_fails_as_the_stack_turns_it_on if {
	facts := addon_typo("-KaiScheduler", sort(array.concat(["SelfHosted"], testdata.addon_gates)), ["KaiScheduler"])
	count(gates.nvca_g_004.violations) == 0 with input as facts
	some v in gates.nvca_g_005.violations with input as facts
	contains(v.message, "NVCA ignores it, so NVCA runs with KAIScheduler on (the add-on stack appends it itself")
	# the add-on needs the gate: the fix removes the item, never `-KAIScheduler`, which would turn it off
	endswith(v.message, "; remove the item: the add-on stack turns KAIScheduler on for the kaiScheduler add-on, which needs it (writing \"-KAIScheduler\" would turn it off)")
}

# NVCA-G-006
test_g006_cpu_nodes_without_constraints_passes if {
	facts := sa_gates(["HelmAllowCPUNodes", "-HelmResourceConstraints"], ["HelmAllowCPUNodes"], ["HelmResourceConstraints"])
	count(gates.nvca_g_006.violations) == 0 with input as facts
}

test_g006_cpu_nodes_with_default_constraints_fails if {
	facts := sa_gates(["HelmAllowCPUNodes"], ["HelmAllowCPUNodes"], [])
	count(gates.nvca_g_006.violations) == 1 with input as facts
}

# NVCA-G-007
test_g007_consistent_list_passes if {
	count(gates.nvca_g_007.violations) == 0 with input as sa
}

test_g007_enabled_and_disabled_warns if {
	facts := sa_gates(["LogPosting", "SelfHosted", "-LogPosting"], ["SelfHosted"], ["LogPosting"])
	some v in gates.nvca_g_007.violations with input as facts
	v.path == ["selfManaged", "featureGateValues", 0]
}

hops(changes) := data.kai_gitops.testdata.with_live({"gate_hops": object.union(testdata.live_part.gate_hops, changes)})

spec := testdata.live_part.gate_hops.spec

# NVCA-G-010
test_g010_configmap_equal_to_git_passes if {
	count(gates.nvca_g_010.violations) == 0 with input as testdata.live_ok
}

test_g010_signed_sets_ignore_plus_and_order if {
	facts := hops({"configmap": array.concat(["+KAIScheduler"], [g | some g in testdata.addon_gates; g != "KAIScheduler"])})
	count(gates.nvca_g_010.violations) == 0 with input as facts
}

test_g010_stale_configmap_fails if {
	facts := hops({"configmap": [g | some g in testdata.addon_gates; g != "KAIScheduler"]})
	some v in gates.nvca_g_010.violations with input as facts
	contains(v.message, "only in Git: [KAIScheduler]; only in ConfigMap: []")
}

# NVCA-G-011
test_g011_spec_without_dgd_passes if {
	count(gates.nvca_g_011.violations) == 0 with input as testdata.live_ok
}

test_g011_spec_differs_fails if {
	facts := hops({"spec": array.concat(spec, ["-KAIScheduler"])})
	some v in gates.nvca_g_011.violations with input as facts
	contains(v.message, "only in spec: [-KAIScheduler]")
}

# NVCA-G-012
test_g012_rolled_out_passes if {
	count(gates.nvca_g_012.violations) == 0 with input as testdata.live_ok
}

test_g012_status_behind_spec_warns if {
	facts := hops({"status": [g | some g in spec; g != "KAIScheduler"]})
	some v in gates.nvca_g_012.violations with input as facts
	startswith(v.message, "feature-gate rollout pending: NVCFBackend status.featureGate.values differ from spec.featureGate.values")
}

test_g012_overrides_replace_spec if {
	facts := hops({"overrides": ["SelfHosted"], "status": ["SelfHosted"]})
	count(gates.nvca_g_012.violations) == 0 with input as facts
}

# NVCA-G-013
test_g013_no_overrides_passes if {
	count(gates.nvca_g_013.violations) == 0 with input as testdata.live_ok
}

test_g013_overrides_warn if {
	facts := hops({"overrides": ["SelfHosted"], "status": ["SelfHosted"]})
	some v in gates.nvca_g_013.violations with input as facts
	contains(v.message, "spec.overrides.featureGate.values [\"SelfHosted\"]")
}

test_g013_names_the_git_list if {
	facts := hops({"overrides": ["SelfHosted"], "status": ["SelfHosted"]})
	some v in gates.nvca_g_013.violations with input as facts
	contains(v.message, sprintf("which replace the Git list %s until", [json.marshal(facts.desired.gates.effective)]))
}

test_g013_without_git_names_the_spec_list_not_a_git_list if {
	facts := object.remove(hops({"overrides": ["SelfHosted"], "status": ["SelfHosted"]}), ["desired"])
	some v in gates.nvca_g_013.violations with input as facts
	not contains(v.message, "Git list")
	contains(v.message, sprintf("which replace spec.featureGate.values %s until the next Helm upgrade wipes them (Git's list was not read", [json.marshal(spec)]))
}

test_g010_needs_a_gate_list_in_git if {
	facts := object.remove(hops({"configmap": ["SelfHosted"]}), ["desired"])
	count(gates.nvca_g_010.violations) == 0 with input as facts
}

# NVCA-G-014
live_gates(user, disabled, status) := object.union(testdata.live_ok, {
	"desired": {"gates": {"doc": "nvca_values", "path": ["selfManaged", "featureGateValues"], "user": user, "effective": user, "enabled": [], "disabled": disabled}},
	"live": {"gate_hops": {"configmap": null, "spec": null, "overrides": null, "status": status}},
})

test_g014_gate_on_passes if {
	count(gates.nvca_g_014.violations) == 0 with input as testdata.live_ok
}

test_g014_disabled_in_git_with_pods_on_kai_warns_at_the_item if {
	facts := live_gates(["SelfHosted", "-KAIScheduler"], ["KAIScheduler"], null)
	some v in gates.nvca_g_014.violations with input as facts
	v.path == ["selfManaged", "featureGateValues", 1]
	contains(v.message, "2 NVCF pod(s) are scheduled by KAI")
}

test_g014_disabled_live_only_warns_without_a_line if {
	facts := live_gates(["SelfHosted"], [], ["SelfHosted", "-KAIScheduler"])
	some v in gates.nvca_g_014.violations with input as facts
	v.doc == null
	contains(v.message, "rolled-out feature gates")
}

test_g014_no_pods_on_kai_passes if {
	facts := object.union(live_gates(["-KAIScheduler"], ["KAIScheduler"], null), {"live": {"nvcf_pods": {"total": 2, "not_on_kai_count": 2}}})
	count(gates.nvca_g_014.violations) == 0 with input as facts
}
