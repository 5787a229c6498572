package kai_gitops.tests.release

import data.kai_gitops.rules.release
import data.kai_gitops.testdata

rel(changes) := object.union(testdata.live_part.releases[0], changes)

# KAI-R-001
# The standalone baseline writes every value out; these values leave the queue resources to the chart.
partial_values := {
	"scheduler": testdata.canonical_values.scheduler,
	"defaultQueue": object.remove(testdata.canonical_values.defaultQueue, ["parentResources", "childResources"]),
}

pinned(pin, defaults) := object.union(
	data.kai_gitops.testdata.with_kai_values(testdata.standalone_static, partial_values, testdata.canonical_values),
	{"desired": {"kai_chart_pin": pin, "defaults_version": defaults}},
)

test_r001_same_minor_defaults_pass if {
	count(release.kai_r_001.violations) == 0 with input as pinned("v0.16.7", "v0.16.8")
}

test_r001_values_all_written_out_pass if {
	facts := object.union(testdata.standalone_static, {"desired": {"kai_chart_pin": "v0.18.1", "defaults_version": "v0.17.0"}})
	count(release.kai_r_001.violations) == 0 with input as facts
}

test_r001_addon_mode_is_silent if {
	facts := object.union(testdata.addon_static, {"desired": {"kai_chart_pin": "v0.18.1", "defaults_version": "v0.17.0"}})
	count(release.kai_r_001.violations) == 0 with input as facts
}

test_r001_other_minor_defaults_with_inherited_values_fail if {
	vs := [v | some v in release.kai_r_001.violations with input as pinned("v0.18.1", "v0.17.0")]
	count(vs) == 1
	startswith(vs[0].message, "the repo pins KAI chart v0.18.1 but kai-gitops has no chart defaults for the v0.18 line and judges values the KAI values file leaves out by chart v0.17.0 defaults")
	contains(vs[0].message, "write these 18 value(s) out: defaultQueue.parentResources.cpu.quota, ")
	vs[0].doc == "kai_values"
}

test_r001_prerelease_pin_of_another_minor_fails if {
	count(release.kai_r_001.violations) == 1 with input as pinned("0.18.0-rc.1", "v0.17.0")
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

# KAI-R-016
test_r016_all_namespaces_searched_passes if {
	count(release.kai_r_016.violations) == 0 with input as testdata.live_ok
	facts := data.kai_gitops.testdata.with_live({"release_search": {"all_namespaces": true, "namespaces": [], "reason": ""}})
	count(release.kai_r_016.violations) == 0 with input as facts
}

test_r016_namespace_only_search_is_reported if {
	search := {"all_namespaces": false, "namespaces": ["kai-scheduler"], "reason": "HTTP 403 (forbidden)"}
	facts := data.kai_gitops.testdata.with_live({"release_search": search})
	some v in release.kai_r_016.violations with input as facts
	contains(v.message, "only in namespace(s) kai-scheduler (HTTP 403 (forbidden))")
}

test_r016_static_scope_is_silent if {
	facts := object.union(testdata.addon_static, {"live": {"release_search": {"all_namespaces": false, "namespaces": ["kai-scheduler"], "reason": ""}}})
	count(release.kai_r_016.violations) == 0 with input as facts
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

test_r013_older_deployed_revision_is_not_judged if {
	# Only the newest revision counts: a failed revision 2 before a deployed revision 3 is history.
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"revision": 3, "latest_revision": 3})]})
	count(release.kai_r_013.violations) == 0 with input as facts
}

test_r013_failed_upgrade_over_deployed_revision_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"revision": 4, "latest_revision": 5, "latest_status": "failed"})]})
	vs := [v | some v in release.kai_r_013.violations with input as facts]
	count(vs) == 1
	vs[0].message == "release kai-scheduler/kai-scheduler: upgrade to revision 5 failed; revision 4 is live"
	vs[0].subject == {"apiVersion": "helm.sh/v3", "kind": "HelmRelease", "namespace": "kai-scheduler", "name": "kai-scheduler"}
	vs[0].fix == "helm history kai-scheduler --namespace kai-scheduler"
}

test_r013_pending_upgrade_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"revision": 4, "latest_revision": 5, "latest_status": "pending-upgrade"})]})
	some v in release.kai_r_013.violations with input as facts
	v.message == "release kai-scheduler/kai-scheduler: revision 5 is pending-upgrade: a helm operation is still running or was interrupted; revision 4 is live"
}

test_r013_failed_install_without_deployed_revision_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"status": "failed", "latest_status": "failed"})]})
	some v in release.kai_r_013.violations with input as facts
	v.message == "release kai-scheduler/kai-scheduler: install (revision 1) failed; no revision is deployed"
}

test_r013_pending_install_fails if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"status": "pending-install", "latest_status": "pending-install"})]})
	some v in release.kai_r_013.violations with input as facts
	endswith(v.message, "still running or was interrupted; no revision is deployed")
}

test_r013_facts_without_latest_fields_use_the_chosen_revision if {
	old := object.remove(rel({"status": "failed", "revision": 4}), ["latest_revision", "latest_status"])
	some v in release.kai_r_013.violations with input as data.kai_gitops.testdata.with_live({"releases": [old]})
	v.message == "release kai-scheduler/kai-scheduler: upgrade to revision 4 failed; no revision is deployed"
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

# KAI-R-015
secret_error := "Secret/kai-scheduler/sh.helm.release.v1.kai-scheduler.v6: data.release is not a Helm release (Error)"

test_r015_no_release_errors_pass if {
	count(release.kai_r_015.violations) == 0 with input as testdata.live_ok
}

test_r015_undecodable_secret_warns if {
	facts := data.kai_gitops.testdata.with_live({"release_errors": [secret_error]})
	vs := [v | some v in release.kai_r_015.violations with input as facts]
	count(vs) == 1
	vs[0].subject == {"apiVersion": "v1", "kind": "Secret", "namespace": "kai-scheduler", "name": "sh.helm.release.v1.kai-scheduler.v6"}
	startswith(vs[0].message, "Helm release Secret kai-scheduler/sh.helm.release.v1.kai-scheduler.v6 could not be decoded (data.release is not a Helm release (Error))")
	vs[0].fix == "helm history kai-scheduler --namespace kai-scheduler"
	not contains(vs[0].fix, "kubectl")
}

test_r015_each_error_is_reported_and_dotted_release_names_survive if {
	errors := [secret_error, "Secret/team/sh.helm.release.v1.kai.v2.v1: no data.release"]
	fixes := {v.fix | some v in release.kai_r_015.violations with input as data.kai_gitops.testdata.with_live({"release_errors": errors})}
	fixes == {"helm history kai-scheduler --namespace kai-scheduler", "helm history kai.v2 --namespace team"}
}

test_r015_reason_with_colons_is_kept_whole if {
	errors := ["Secret/ns/sh.helm.release.v1.x.v1: data.release has an unexpected shape: ValueError"]
	some v in release.kai_r_015.violations with input as data.kai_gitops.testdata.with_live({"release_errors": errors})
	contains(v.message, "could not be decoded (data.release has an unexpected shape: ValueError)")
}

test_r015_unexpected_entry_is_still_reported if {
	some v in release.kai_r_015.violations with input as data.kai_gitops.testdata.with_live({"release_errors": ["something odd"]})
	v.subject == null
	contains(v.message, "(something odd)")
}

test_r015_static_scope_is_silent if {
	facts := object.union(testdata.addon_static, {"live": {"release_errors": [secret_error]}})
	count(release.kai_r_015.violations) == 0 with input as facts
}

# One subject for the KAI release in every rule that names it, and it is the Python differ's.
differ_subject := {"apiVersion": "helm.sh/v3", "kind": "HelmRelease", "namespace": "kai-scheduler", "name": "kai-scheduler"}

test_release_subject_is_the_differs if {
	facts := data.kai_gitops.testdata.with_live({"releases": [rel({"chart_version": "v0.14.0", "latest_revision": 2, "latest_status": "failed"})]})
	r012 := {v.subject | some v in release.kai_r_012.violations with input as facts}
	r013 := {v.subject | some v in release.kai_r_013.violations with input as facts}
	r010 := {v.subject | some v in release.kai_r_010.violations with input as data.kai_gitops.testdata.with_live({"releases": []})}
	other := data.kai_gitops.testdata.with_live({"releases": [rel({"namespace": "kai"})]})
	r011 := {v.subject | some v in release.kai_r_011.violations with input as other}
	subjects := (r012 | r013) | r010
	subjects == {differ_subject}
	count(r012) == 1
	count(r013) == 1
	count(r010) == 1
	r011 == {object.union(differ_subject, {"namespace": "kai"})}
}

# KAI-R-003
with_era(era) := object.union(testdata.standalone_static, {"desired": {"kai_chart_pin": "v0.13.4", "kai_chart": {"era": era}}})

test_r003_deployer_eras_pass if {
	count(release.kai_r_003.violations) == 0 with input as with_era("E2")
	count(release.kai_r_003.violations) == 0 with input as with_era("E3")
}

test_r003_hook_era_warns if {
	some v in release.kai_r_003.violations with input as with_era("E1")
	startswith(v.message, "KAI chart v0.13.4 renders kai-config as a pre-upgrade Helm hook")
	contains(v.message, "KAI-Scheduler #1536")
	v.doc == "config"
}

test_r003_unknown_version_warns if {
	some v in release.kai_r_003.violations with input as with_era(null)
	startswith(v.message, "kai-gitops does not know how KAI chart v0.13.4 produces kai-config")
}

test_r003_facts_without_era_are_not_judged if {
	count(release.kai_r_003.violations) == 0 with input as object.union(testdata.standalone_static, {"desired": {"kai_chart": {}}})
}
