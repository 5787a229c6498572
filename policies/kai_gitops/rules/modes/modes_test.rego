package kai_gitops.tests.modes

import data.kai_gitops.rules.modes
import data.kai_gitops.testdata

addons(a) := object.union(testdata.addon_static, {"desired": {"addons": a}})

# KAI-M-001
test_m001_addon_only_passes if {
	count(modes.kai_m_001.violations) == 0 with input as testdata.addon_static
}

test_m001_addon_and_standalone_fails if {
	facts := object.union(testdata.standalone_static, {"desired": {"addons": {"kaiScheduler": true}, "addons_doc": "env"}})
	some v in modes.kai_m_001.violations with input as facts
	v.path == ["addons", "kaiScheduler", "enabled"]
	contains(v.message, "clusters/a/kai-values.yaml")
}

# KAI-M-002
test_m002_topology_with_kai_passes if {
	count(modes.kai_m_002.violations) == 0 with input as addons({"topologyAwareScheduling": true})
}

test_m002_topology_without_kai_fails if {
	some v in modes.kai_m_002.violations with input as addons({"topologyAwareScheduling": true, "kaiScheduler": false})
	v.doc == "env"
}

test_m002_standalone_kai_is_not_enough if {
	facts := object.union(testdata.standalone_static, {"desired": {"addons": {"topologyAwareScheduling": true}}})
	count(modes.kai_m_002.violations) == 1 with input as facts
}

# KAI-M-003
test_m003_grove_with_standalone_kai_passes if {
	facts := object.union(testdata.standalone_static, {"desired": {"addons": {"groveOperator": true}}})
	count(modes.kai_m_003.violations) == 0 with input as facts
}

test_m003_grove_without_kai_fails if {
	count(modes.kai_m_003.violations) == 1 with input as addons({"groveOperator": true, "kaiScheduler": false})
}

# KAI-M-004
test_m004_dynamo_with_grove_passes if {
	count(modes.kai_m_004.violations) == 0 with input as addons({"groveOperator": true, "dynamoOperator": true})
}

test_m004_dynamo_without_grove_fails if {
	some v in modes.kai_m_004.violations with input as addons({"dynamoOperator": true})
	v.path == ["addons", "dynamoOperator", "enabled"]
}

# KAI-M-005
test_m005_addon_with_kai_passes if {
	count(modes.kai_m_005.violations) == 0 with input as testdata.addon_static
}

test_m005_addon_without_kai_fails if {
	facts := object.union(testdata.addon_static, {"desired": {"addons": {"kaiScheduler": false}}})
	some v in modes.kai_m_005.violations with input as facts
	v.doc == "env"
	v.path == ["addons", "kaiScheduler", "enabled"]
	contains(v.message, "environments/test.yaml does not enable addons.kaiScheduler")
}

test_m005_standalone_is_not_judged if {
	count(modes.kai_m_005.violations) == 0 with input as testdata.standalone_static
}
