# The clean baselines must produce no violation at all, so every other test changes exactly one thing.
package kai_gitops.tests.baseline

import data.kai_gitops.testdata

rule_hits(facts) := [[area, rule, v] |
	tree := data.kai_gitops.rules with input as facts
	some area, rules in tree
	some rule, body in rules
	some v in body.violations
]

test_addon_static_is_clean if {
	count(rule_hits(testdata.addon_static)) == 0
}

test_standalone_static_is_clean if {
	count(rule_hits(testdata.standalone_static)) == 0
}

test_live_ok_is_clean if {
	count(rule_hits(testdata.live_ok)) == 0
}

test_live_rules_silent_in_static_scope if {
	facts := object.union(testdata.addon_static, {"live": {"queue_kind_served": false, "crds": {}}})
	count(rule_hits(facts)) == 0
}
