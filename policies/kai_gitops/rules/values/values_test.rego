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
	startswith(v.message, "21 canonical KAI value(s) are not set and rely on chart v0.16.7 defaults (as in v0.16.9, the nearest chart kai-gitops models): defaultQueue.createDefaultQueue")
}

# KAI-V-012
v017(user) := object.union(sa, {"desired": {
	"kai_chart_pin": "v0.17.0",
	"kai_chart": {"era": "E3", "sections": testdata.chart_sections_v0_17},
	"kai_values_user": user,
	"kai_values_effective": object.union({"kaiConfig": {"render": false}, "kaiConfigDeployer": {"enabled": true}}, user),
}})

test_v012_render_alone_with_deployer_off_passes if {
	facts := v017({"kaiConfig": {"render": true}, "kaiConfigDeployer": {"enabled": false}})
	count(values.kai_v_012.violations) == 0 with input as facts
}

test_v012_chart_defaults_pass if {
	count(values.kai_v_012.violations) == 0 with input as v017({})
}

test_v012_render_with_default_deployer_fails if {
	some v in values.kai_v_012.violations with input as v017({"kaiConfig": {"render": true}})
	v.message == "kaiConfig.render and kaiConfigDeployer.enabled are both true (kaiConfigDeployer.enabled by chart default): chart v0.17.0 refuses to render (\"mutually exclusive\"); set kaiConfigDeployer.enabled: false"
	v.path == ["kaiConfig", "render"]
}

test_v012_chart_without_the_switch_is_not_judged if {
	facts := object.union(v017({"kaiConfig": {"render": true}}), {"desired": {"kai_chart": {"sections": testdata.chart_sections_v0_16}}})
	count(values.kai_v_012.violations) == 0 with input as facts
}

# KAI-V-013
no_default_shard(manifests) := object.union(sa, {"desired": {
	"kai_values_user": {"defaultShard": {"enabled": false}},
	"kai_values_effective": object.union(testdata.canonical_values, {"defaultShard": {"enabled": false}}),
	"kai_manifests": manifests,
}})

test_v013_default_shard_passes if {
	count(values.kai_v_013.violations) == 0 with input as sa
}

test_v013_no_shard_anywhere_fails if {
	some v in values.kai_v_013.violations with input as no_default_shard([])
	v.path == ["defaultShard", "enabled"]
	contains(v.message, "no scheduler will run")
}

test_v013_shard_kept_in_git_passes if {
	facts := no_default_shard([{"kind": "SchedulingShard", "name": "default", "doc": "kai_manifests:0:0"}])
	count(values.kai_v_013.violations) == 0 with input as facts
}

# KAI-V-014
with_manifests(manifests) := object.union(sa, {"desired": {"kai_manifests": manifests}})

test_v014_kai_config_passes if {
	facts := with_manifests([{"kind": "Config", "name": "kai-config", "doc": "kai_manifests:0:0"}])
	count(values.kai_v_014.violations) == 0 with input as facts
}

test_v014_other_name_fails if {
	facts := with_manifests([{"kind": "Config", "name": "kai-config-lab", "doc": "kai_manifests:0:1"}])
	some v in values.kai_v_014.violations with input as facts
	v.doc == "kai_manifests:0:1"
	v.path == ["metadata", "name"]
	v.subject.name == "kai-config-lab"
	startswith(v.message, "Config \"kai-config-lab\" is ignored by the KAI operator")
}
