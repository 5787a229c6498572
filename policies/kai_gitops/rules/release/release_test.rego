package kai_gitops.tests.release

import data.kai_gitops.rules.release
import data.kai_gitops.testdata

rel(changes) := object.union(testdata.live_part.releases[0], changes)

# KAI-R-001
test_r001_pinned_standalone_passes if {
	count(release.kai_r_001.violations) == 0 with input as testdata.standalone_static
}

test_r001_unpinned_standalone_fails if {
	facts := object.union(testdata.standalone_static, {"desired": {"kai_chart_pin": null}})
	some v in release.kai_r_001.violations with input as facts
	v.doc == "config"
}

# KAI-R-002
test_r002_pin_equal_to_stack_passes if {
	count(release.kai_r_002.violations) == 0 with input as testdata.addon_static
}

test_r002_pin_differs_from_stack_fails if {
	facts := object.union(testdata.addon_static, {"desired": {"kai_chart_pin": "v0.14.0"}})
	some v in release.kai_r_002.violations with input as facts
	v.message == "the repo config pins KAI chart v0.14.0 but the compute plane stack installs v0.16.7; set the pin to v0.16.7"
}

# KAI-R-010
test_r010_one_release_passes if {
	count(release.kai_r_010.violations) == 0 with input as testdata.live_ok
}

test_r010_second_release_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({}), rel({"name": "kai", "namespace": "scheduling"})]})
	some v in release.kai_r_010.violations with input as facts
	contains(v.message, "found 2 KAI releases (kai-scheduler/kai-scheduler v0.16.7, scheduling/kai v0.16.7)")
}

test_r010_no_release_fails_when_git_installs_kai if {
	count(release.kai_r_010.violations) == 1 with input as data.kai_gitops.testdata.with_live({"releases": []})
}

# KAI-R-011
test_r011_canonical_release_passes if {
	count(release.kai_r_011.violations) == 0 with input as testdata.live_ok
}

test_r011_other_namespace_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"namespace": "kai"})]})
	some v in release.kai_r_011.violations with input as facts
	v.fix == "helm uninstall kai-scheduler --namespace kai"
}

# KAI-R-012
test_r012_pinned_version_passes if {
	count(release.kai_r_012.violations) == 0 with input as testdata.live_ok
}

test_r012_other_version_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"chart_version": "v0.14.0"})]})
	some v in release.kai_r_012.violations with input as facts
	v.message == "release kai-scheduler runs chart v0.14.0 but Git pins v0.16.7; upgrade the release to v0.16.7"
	contains(v.fix, "--version v0.16.7")
}

# KAI-R-013
test_r013_deployed_passes if {
	count(release.kai_r_013.violations) == 0 with input as testdata.live_ok
}

test_r013_failed_revision_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"status": "failed", "revision": 4})]})
	some v in release.kai_r_013.violations with input as facts
	contains(v.message, "revision 4 is \"failed\"")
}

# KAI-R-014
test_r014_complete_crds_pass if {
	count(release.kai_r_014.violations) == 0 with input as testdata.live_ok
}

test_r014_missing_shard_crd_fails if {
	crds := object.union(testdata.live_part.crds, {"schedulingshards.kai.scheduler": false})
	some v in release.kai_r_014.violations with input as data.kai_gitops.testdata.with_live({"crds": crds})
	v.subject.name == "schedulingshards.kai.scheduler"
}
