package kai_gitops.tests.values

import data.kai_gitops.rules.values
import data.kai_gitops.testdata

sa := testdata.standalone_static

with_values(user, effective) := data.kai_gitops.testdata.with_kai_values(sa, user, effective)

# KAI-V-001
test_v001_binpack_passes if {
	count(values.kai_v_001.violations) == 0 with input as sa
}

test_v001_spread_fails if {
	facts := with_values({"scheduler": {"placementStrategy": "spread"}}, {"scheduler": {"placementStrategy": "spread"}})
	some v in values.kai_v_001.violations with input as facts
	v.message == "scheduler.placementStrategy is \"spread\"; NVCA requires \"binpack\". Set scheduler.placementStrategy: binpack"
	v.doc == "kai_values"
	v.path == ["scheduler", "placementStrategy"]
}

test_v001_addon_mode_is_not_checked if {
	facts := object.union(testdata.addon_static, {"desired": {"kai_values_effective": {"scheduler": {"placementStrategy": "spread"}}}})
	count(values.kai_v_001.violations) == 0 with input as facts
}

# KAI-V-002
test_v002_canonical_arguments_pass if {
	count(values.kai_v_002.violations) == 0 with input as sa
}

test_v002_missing_and_wrong_arguments_fail if {
	facts := with_values({}, object.union(testdata.canonical_values, {"scheduler": {"plugins": {"nodeplacement": {"arguments": {"gpu": "spread", "cpu": null}}}}}))
	msgs := {v.message | some v in values.kai_v_002.violations with input as facts}
	msgs == {
		"scheduler.plugins.nodeplacement.arguments.gpu is \"spread\"; set it to \"binpack\"",
		"scheduler.plugins.nodeplacement.arguments.cpu is not set (KAI's built-in default applies); set it to \"spread\"",
	}
}

# KAI-V-003
test_v003_disabled_actions_pass if {
	count(values.kai_v_003.violations) == 0 with input as sa
}

test_v003_enabled_or_unset_actions_fail if {
	effective := object.union(testdata.canonical_values, {"scheduler": {"actions": {"preempt": {"enabled": true}, "consolidation": {"enabled": null}}}})
	facts := with_values({}, effective)
	paths := {v.path | some v in values.kai_v_003.violations with input as facts}
	paths == {["scheduler", "actions", "preempt", "enabled"], ["scheduler", "actions", "consolidation", "enabled"]}
}

# KAI-V-004
test_v004_written_out_values_pass if {
	count(values.kai_v_004.violations) == 0 with input as sa
}

test_v004_inherited_defaults_fail if {
	facts := with_values({"scheduler": testdata.canonical_values.scheduler}, testdata.canonical_values)
	some v in values.kai_v_004.violations with input as facts
	startswith(v.message, "21 canonical KAI value(s) are not set and rely on chart v0.16.8 defaults: defaultQueue.createDefaultQueue")
}
